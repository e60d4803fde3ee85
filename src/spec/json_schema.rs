//! The JSON Schema of the spec format, for editors (`# yaml-language-server:
//! $schema=…`) and CI. Written by hand beside the shipped specs; a test keeps its
//! keys the same as the loader's.

pub const SCHEMA: &str = include_str!("../../specs/evalspec.schema.json");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::KEY_TABLES;

    #[test]
    fn the_schema_knows_exactly_the_keys_the_loader_knows() {
        let schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap();
        let defs = &schema["$defs"];
        let keys = |object: &serde_json::Value| -> Vec<String> {
            let mut keys: Vec<String> = object["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("no properties in {object}"))
                .keys()
                .cloned()
                .collect();
            keys.sort();
            keys
        };
        let place = |name: &str| -> serde_json::Value {
            match name {
                "top" => schema.clone(),
                "param" => defs["param"].clone(),
                "dataset" => defs["dataset"].clone(),
                "rule" => defs["dataset"]["properties"]["schema"]["additionalProperties"]["oneOf"]
                    [1]
                .clone(),
                "metric" => defs["metric"]["oneOf"][1].clone(),
                "slice" => defs["slice"]["oneOf"][1].clone(),
                "gate" => defs["gate"]["oneOf"][1].clone(),
                "offenders" => schema["properties"]["offenders"].clone(),
                "report" => schema["properties"]["reports"]["items"]["oneOf"][1].clone(),
                "tradeoff" => schema["properties"]["tradeoff"].clone(),
                "remove" => schema["properties"]["remove"].clone(),
                other => panic!("no place for {other}"),
            }
        };
        for (name, table) in KEY_TABLES {
            let mut expected: Vec<String> = table.iter().map(|k| k.to_string()).collect();
            expected.sort();
            assert_eq!(keys(&place(name)), expected, "keys of {name}");
        }
    }
}
