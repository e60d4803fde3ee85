//! [`NameMap`]: the JSON objects of a report keyed by user names (metrics,
//! params, labels, datasets, …), kept in the order they were written.

use std::fmt;
use std::marker::PhantomData;

use indexmap::IndexMap;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Name → value in a fixed order (declaration order when written by a run, file
/// order when read back). A name given twice keeps its first place and its last
/// value, as a JSON object read into `serde_json::Value` does. Names are found
/// by hash: a slice's values are its names, and a slice of 20,000 values (an
/// id, by mistake a float) found linearly took seconds in a run and more in a
/// diff.
#[derive(Debug, Clone)]
pub struct NameMap<T>(IndexMap<String, T>);

/// Equal when the same names hold equal values in the same order.
impl<T: PartialEq> PartialEq for NameMap<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().eq(other.0.iter())
    }
}

impl<T> NameMap<T> {
    pub fn new() -> Self {
        NameMap(IndexMap::new())
    }

    /// Adds `name`, or replaces its value in place.
    pub fn insert(&mut self, name: String, value: T) {
        self.0.insert(name, value);
    }

    pub fn get(&self, name: &str) -> Option<&T> {
        self.0.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut T)> {
        self.0.iter_mut().map(|(n, v)| (n.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T> Default for NameMap<T> {
    fn default() -> Self {
        NameMap::new()
    }
}

impl<T> FromIterator<(String, T)> for NameMap<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        let mut map = NameMap::new();
        for (name, value) in iter {
            map.insert(name, value);
        }
        map
    }
}

impl<T: Serialize> Serialize for NameMap<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NameMap<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
            type Value = NameMap<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = NameMap::new();
                while let Some((name, value)) = access.next_entry::<String, T>()? {
                    map.insert(name, value);
                }
                Ok(map)
            }
        }

        deserializer.deserialize_map(Entries(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_its_first_place_and_its_last_value() {
        let map: NameMap<u32> = [("b", 1), ("a", 2), ("b", 3), ("c", 4)]
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
        assert_eq!(map.names().collect::<Vec<_>>(), ["b", "a", "c"]);
        assert_eq!(map.get("b"), Some(&3));
        assert_eq!(map.get("d"), None);
        let json = serde_json::to_string(&map).unwrap();
        assert_eq!(json, r#"{"b":3,"a":2,"c":4}"#);
        let read: NameMap<u32> = serde_json::from_str(r#"{"b":1,"a":2,"b":3,"c":4}"#).unwrap();
        assert_eq!(read, map);
    }

    #[test]
    fn maps_are_equal_only_in_the_same_order() {
        let map =
            |names: &[&str]| -> NameMap<u32> { names.iter().map(|n| (n.to_string(), 0)).collect() };
        assert_eq!(map(&["a", "b"]), map(&["a", "b"]));
        assert_ne!(map(&["a", "b"]), map(&["b", "a"]));
        assert_ne!(map(&["a"]), map(&["a", "b"]));
    }
}
