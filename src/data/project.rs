//! Parsing a JSON object straight into projected slots. Fields the plan does not
//! read are skipped without building values; keys are matched without allocating.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::base::value::Value;
use crate::plan::{ProjectedField, Projection};

/// Shares the short strings found inside lists (retrieved ids, citations): a corpus
/// has far fewer distinct ids than a trace file has mentions of them. Capped, so a
/// file of unique strings cannot grow it without bound, and switched off field by
/// field (a slot, a column) when few of that field's strings repeat: ids drawn from
/// a large corpus only cost a hash, a probe and an insert per string there, while
/// the same file's constraint texts repeat almost every time.
///
/// It also holds the buffer lists are collected in, reused from record to record,
/// so that a list costs one allocation (its shared slice) instead of two.
#[derive(Default)]
pub struct Interner {
    strings: std::collections::HashSet<Arc<str>, foldhash::fast::FixedState>,
    /// Per field, how its strings have fared; `field` is the one being read.
    fields: Vec<Sharing>,
    field: usize,
    lists: Vec<Value>,
    /// Per slot: some record read had its field (null or not). A field the
    /// plan reads that no record has is most likely a typo.
    pub seen: Vec<bool>,
}

/// How often a field's strings were found already shared, and whether it still
/// looks them up.
#[derive(Default, Clone, Copy)]
struct Sharing {
    looked_up: u64,
    found: u64,
    off: bool,
}

impl Interner {
    const MAX_LEN: usize = 32;
    const MAX_ENTRIES: usize = 1 << 20;
    /// Looked-up strings before a field's share found is first judged (then at
    /// every doubling), and the least share found that keeps it on. Early
    /// enough that a small run does not hash every id of a large corpus (at 10k
    /// items that was 15% of the CPU); a vocabulary that repeats shows by then.
    const FIRST_CHECK: u64 = 1 << 12;
    const MIN_FOUND_PER_16: u64 = 4;

    /// A record had the field of slot `slot`.
    pub fn saw(&mut self, slot: usize) {
        if slot >= self.seen.len() {
            self.seen.resize(slot + 1, false);
        }
        self.seen[slot] = true;
    }

    /// The strings that follow belong to field `field` (a slot or a column).
    pub fn field(&mut self, field: usize) {
        self.field = field;
    }

    pub fn string(&mut self, s: &str) -> Arc<str> {
        if s.len() > Self::MAX_LEN {
            return Arc::from(s);
        }
        if self.field >= self.fields.len() {
            self.fields.resize(self.field + 1, Sharing::default());
        }
        let sharing = &mut self.fields[self.field];
        if sharing.off {
            return Arc::from(s);
        }
        sharing.looked_up += 1;
        let judged = sharing.looked_up >= Self::FIRST_CHECK && sharing.looked_up.is_power_of_two();
        if judged && sharing.found * 16 < sharing.looked_up * Self::MIN_FOUND_PER_16 {
            sharing.off = true;
            // The table serves only fields still sharing (a field that has not
            // looked a string up yet starts it again if it must).
            if self.fields.iter().all(|f| f.off || f.looked_up == 0) {
                self.strings = Default::default();
            }
            return Arc::from(s);
        }
        if let Some(shared) = self.strings.get(s) {
            sharing.found += 1;
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(s);
        if self.strings.len() < Self::MAX_ENTRIES {
            self.strings.insert(shared.clone());
        }
        shared
    }
}

/// Parses one JSON document into `slots` according to `projection`.
pub fn parse_into(
    text: &str,
    projection: &Projection,
    slots: &mut [Value],
    interner: &mut Interner,
) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    RecordSeed {
        projection,
        slots,
        interner,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()
}

struct RecordSeed<'a> {
    projection: &'a Projection,
    slots: &'a mut [Value],
    interner: &'a mut Interner,
}

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        match self.projection.whole {
            Some(slot) => {
                self.interner.field(slot.index());
                let value = ValueSeed {
                    interner: self.interner,
                    in_list: false,
                }
                .deserialize(deserializer)?;
                if !matches!(value, Value::Object(_)) {
                    return Err(de::Error::custom(format!(
                        "expected a JSON object, found a {}",
                        value.type_name()
                    )));
                }
                self.slots[slot.index()] = value;
                Ok(())
            }
            None => deserializer.deserialize_any(FieldsVisitor {
                fields: &self.projection.fields,
                slots: self.slots,
                parent: None,
                interner: self.interner,
            }),
        }
    }
}

struct FieldsVisitor<'a> {
    fields: &'a [(String, ProjectedField)],
    slots: &'a mut [Value],
    /// The enclosing field's name, for messages; `None` at the top level.
    parent: Option<&'a str>,
    interner: &'a mut Interner,
}

impl FieldsVisitor<'_> {
    fn wrong_type<E: de::Error>(&self, found: &str) -> E {
        match self.parent {
            None => E::custom(format!("expected a JSON object, found {found}")),
            Some(parent) => {
                let reads: Vec<String> = self
                    .fields
                    .iter()
                    .map(|(n, _)| format!("`{parent}.{n}`"))
                    .collect();
                E::custom(format!(
                    "field `{parent}` must be an object (the spec reads {}), found {found}",
                    reads.join(", ")
                ))
            }
        }
    }
}

impl<'de> Visitor<'de> for FieldsVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(index) = map.next_key_seed(KeySeed {
            fields: self.fields,
        })? {
            match index.map(|i| &self.fields[i]) {
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
                Some((_, ProjectedField::Slot(slot))) => {
                    self.interner.saw(slot.index());
                    self.interner.field(slot.index());
                    self.slots[slot.index()] = map.next_value_seed(ValueSeed {
                        interner: &mut *self.interner,
                        in_list: false,
                    })?;
                }
                Some((name, ProjectedField::Nested(inner))) => {
                    // A repeated key replaces the whole object, as the last one wins.
                    clear(inner, self.slots);
                    map.next_value_seed(NestedSeed {
                        fields: inner,
                        slots: self.slots,
                        name,
                        interner: &mut *self.interner,
                    })?;
                }
            }
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        match self.parent {
            Some(_) => Ok(()),
            None => Err(self.wrong_type("null")),
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(self.wrong_type("a bool"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(self.wrong_type("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(self.wrong_type("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.wrong_type("a number"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(self.wrong_type("a string"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.wrong_type("a list"))
    }
}

fn clear(fields: &[(String, ProjectedField)], slots: &mut [Value]) {
    for (_, field) in fields {
        match field {
            ProjectedField::Slot(slot) => slots[slot.index()] = Value::Null,
            ProjectedField::Nested(inner) => clear(inner, slots),
        }
    }
}

struct NestedSeed<'a> {
    fields: &'a [(String, ProjectedField)],
    slots: &'a mut [Value],
    name: &'a str,
    interner: &'a mut Interner,
}

impl<'de> DeserializeSeed<'de> for NestedSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(FieldsVisitor {
            fields: self.fields,
            slots: self.slots,
            parent: Some(self.name),
            interner: self.interner,
        })
    }
}

/// Matches an object key against the projected names without allocating.
struct KeySeed<'a> {
    fields: &'a [(String, ProjectedField)],
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.fields.iter().position(|(name, _)| name == key))
    }
}

/// Builds a [`Value`] for a field the plan reads whole.
struct ValueSeed<'a> {
    interner: &'a mut Interner,
    /// Strings directly inside a list are interned.
    in_list: bool,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from_i64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from_u64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(if self.in_list {
            self.interner.string(v)
        } else {
            Arc::from(v)
        }))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // Elements go on the shared buffer (a nested list's above its parent's).
        let start = self.interner.lists.len();
        loop {
            let seed = ValueSeed {
                interner: &mut *self.interner,
                in_list: true,
            };
            match seq.next_element_seed(seed) {
                Ok(Some(item)) => self.interner.lists.push(item),
                Ok(None) => break,
                Err(e) => {
                    self.interner.lists.truncate(start);
                    return Err(e);
                }
            }
        }
        let items = self.interner.lists.drain(start..);
        Ok(match items.len() {
            0 => Value::empty_list(),
            _ => Value::List(items.collect()),
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = ObjectFields::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let value = map.next_value_seed(ValueSeed {
                interner: &mut *self.interner,
                in_list: false,
            })?;
            fields.insert(key, value);
        }
        Ok(fields.into_value())
    }
}

/// An object's fields as they are read: a key given twice keeps its first
/// place and its last value, as serde_json's own objects do. Keys are compared
/// one by one while there are few (most objects have a handful) and found by
/// hash past that: comparing each key with every key before it took 16 s
/// for one object of 100,000 keys (a query's judgements, a map of scores).
#[derive(Default)]
pub struct ObjectFields {
    fields: Vec<(Arc<str>, Value)>,
    index: Option<HashMap<Arc<str>, usize, foldhash::fast::FixedState>>,
}

impl ObjectFields {
    /// Past this many keys, they are found by hash.
    const FEW: usize = 16;

    pub fn insert<K: AsRef<str> + Into<Arc<str>>>(&mut self, key: K, value: Value) {
        let found = match &self.index {
            Some(index) => index.get(key.as_ref()).copied(),
            None => self.fields.iter().position(|(k, _)| **k == *key.as_ref()),
        };
        if let Some(i) = found {
            self.fields[i].1 = value;
            return;
        }
        let key: Arc<str> = key.into();
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.fields.len());
        }
        self.fields.push((key, value));
        if self.index.is_none() && self.fields.len() > Self::FEW {
            let keys = self.fields.iter().enumerate();
            self.index = Some(keys.map(|(i, (k, _))| (k.clone(), i)).collect());
        }
    }

    pub fn into_value(self) -> Value {
        Value::Object(Arc::from(self.fields))
    }
}

/// Parses one JSON value whole (a list or object in a CSV cell).
pub fn parse_value(text: &str, interner: &mut Interner) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = ValueSeed {
        interner,
        in_list: false,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Fields gathered past the hashed threshold keep serde_json's rule: a
        /// repeated key keeps its first place and its last value.
        #[test]
        fn object_fields_keep_first_places_and_last_values(
            keys in proptest::collection::vec(0u8..40, 0..120),
        ) {
            let mut fields = ObjectFields::default();
            let mut expected: Vec<(String, f64)> = Vec::new();
            for (n, key) in keys.iter().enumerate() {
                let key = format!("k{key}");
                let value = n as f64;
                fields.insert(std::borrow::Cow::from(key.as_str()), Value::Number(value));
                match expected.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = value,
                    None => expected.push((key, value)),
                }
            }
            let Value::Object(got) = fields.into_value() else { unreachable!() };
            let got: Vec<(String, f64)> = got
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_f64().unwrap()))
                .collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }

    fn projection(paths: &[&str]) -> Projection {
        let paths: Vec<Vec<String>> = paths
            .iter()
            .map(|p| p.split('.').map(str::to_string).collect())
            .collect();
        Projection::build(paths.iter().map(Vec::as_slice))
    }

    #[test]
    fn reads_only_projected_fields_last_key_wins() {
        let p = projection(&["qid", "answer_json.claim"]);
        let mut slots = vec![Value::Null; p.slot_count];
        let line = r#"{"qid":"A1","big":[1,2,{"x":3}],"answer_json":{"claim":"old","n":1},"answer_json":{"claim":"new"}}"#;
        parse_into(line, &p, &mut slots, &mut Interner::default()).unwrap();
        let qid = p.resolve(&["qid".into()]).slot.index();
        let claim = p
            .resolve(&["answer_json".into(), "claim".into()])
            .slot
            .index();
        assert_eq!(slots[qid], Value::from("A1"));
        assert_eq!(slots[claim], Value::from("new"));
    }

    #[test]
    fn lists_built_on_the_shared_buffer_keep_their_elements_and_nesting() {
        let p = projection(&["a", "b"]);
        let mut slots = vec![Value::Null; p.slot_count];
        let interner = &mut Interner::default();
        // A record that fails inside a list leaves nothing behind for the next.
        assert!(parse_into(r#"{"a": [1, [2, 3], oops]}"#, &p, &mut slots, interner).is_err());
        parse_into(
            r#"{"a": [1, [2, [3]], []], "b": []}"#,
            &p,
            &mut slots,
            interner,
        )
        .unwrap();
        let n = |x: f64| Value::Number(x);
        let expected = Value::list(vec![
            n(1.0),
            Value::list(vec![n(2.0), Value::list(vec![n(3.0)])]),
            Value::empty_list(),
        ]);
        let a = p.resolve(&["a".into()]).slot.index();
        let b = p.resolve(&["b".into()]).slot.index();
        assert_eq!(slots[a], expected);
        assert_eq!(slots[b], Value::empty_list());
        assert!(interner.lists.is_empty());
    }

    #[test]
    fn the_interner_shares_repeated_strings_and_stops_when_few_repeat() {
        let mut repeating = Interner::default();
        let first = repeating.string("doc1#2");
        for i in 0..Interner::FIRST_CHECK * 2 {
            repeating.string(&format!("doc{}", i % 100));
        }
        assert!(Arc::ptr_eq(&first, &repeating.string("doc1#2")));
        assert!(!repeating.fields[0].off);

        // Field 2 alone shares strings: fields 0 and 1 (a key, say) never do.
        let mut unique = Interner::default();
        unique.field(2);
        for i in 0..Interner::FIRST_CHECK {
            unique.string(&format!("doc{i}"));
        }
        assert!(unique.fields[2].off && unique.strings.is_empty());
        let a = unique.string("doc1");
        assert!(!Arc::ptr_eq(&a, &unique.string("doc1")));
        assert_eq!(&*a, "doc1");
    }

    #[test]
    fn each_field_is_judged_on_its_own_strings() {
        // Citations from a large corpus beside constraints from a short list: the
        // first stop being looked up, the second are still shared.
        let mut interner = Interner::default();
        for i in 0..Interner::FIRST_CHECK * 2 {
            interner.field(0);
            interner.string(&format!("doc{i}#1"));
            interner.field(3);
            interner.string(&format!("rule {}", i % 7));
        }
        assert!(interner.fields[0].off);
        assert!(!interner.fields[3].off && !interner.strings.is_empty());
        let shared = interner.string("rule 1");
        assert!(Arc::ptr_eq(&shared, &interner.string("rule 1")));
        interner.field(0);
        let unshared = interner.string("doc1#1");
        assert!(!Arc::ptr_eq(&unshared, &interner.string("doc1#1")));
    }

    #[test]
    fn floats_parse_correctly_rounded() {
        // Python parses this to 0.10498614958448753; a fast parser can be 1 ULP off.
        let p = projection(&["x"]);
        let mut slots = vec![Value::Null; p.slot_count];
        parse_into(
            r#"{"x":0.10498614958448753}"#,
            &p,
            &mut slots,
            &mut Interner::default(),
        )
        .unwrap();
        assert_eq!(slots[0], Value::Number(758.0 / 7220.0));
    }

    #[test]
    fn a_non_object_where_fields_are_read_is_an_error() {
        let p = projection(&["answer_json.claim"]);
        let mut slots = vec![Value::Null; p.slot_count];
        let interner = &mut Interner::default();
        let err = parse_into(r#"{"answer_json":"oops"}"#, &p, &mut slots, interner).unwrap_err();
        assert!(err.to_string().contains("field `answer_json` must be an object (the spec reads `answer_json.claim`), found a string"), "{err}");
        parse_into(r#"{"answer_json":null}"#, &p, &mut slots, interner).unwrap();
        assert!(parse_into("[1]", &p, &mut slots, interner).is_err());
        assert!(parse_into(r#"{"a":1} x"#, &p, &mut slots, interner).is_err());
    }
}
