//! [`PartitionValues`]: the `partitionValues` map of an `add` or `remove` action.
//!
//! A table has a handful of partition columns and a log can hold millions of `add` actions,
//! so the map is a vector of entries sorted by name, not a tree or hash map: one allocation
//! of 48 bytes per column instead of a ~540-byte B-tree leaf per file. Lookups are binary
//! searches. It reads and writes as a JSON object; a name given twice keeps its last value,
//! as a JSON object's would.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Partition values of a file: partition column name (physical) to serialized value; `None` is
/// a null partition value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PartitionValues {
    /// Sorted by name, names unique.
    entries: Vec<(String, Option<String>)>,
}

impl PartitionValues {
    /// No partition values.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of column `name`: `Some(None)` for a null value, `None` when the column
    /// has no entry.
    pub fn get(&self, name: &str) -> Option<&Option<String>> {
        self.position(name).ok().map(|i| &self.entries[i].1)
    }

    /// The serialized value of a partition column, by the one lookup rule every reader of
    /// partition values uses: the entry under its physical name (as the protocol writes it),
    /// else the one under its logical name (writers that ignored column mapping). `None` for
    /// a null value or no entry (both read as null).
    pub fn value_of(&self, physical: &str, logical: &str) -> Option<&str> {
        self.get(physical)
            .or_else(|| self.get(logical))
            .and_then(Option::as_deref)
    }

    /// Whether column `name` has an entry.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Sets the value of `name`, returning the one it replaces.
    pub fn insert(&mut self, name: String, value: Option<String>) -> Option<Option<String>> {
        match self.position(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (name, value));
                None
            }
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Option<String>)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Column names in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.entries.iter().map(|(k, _)| k)
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(name))
    }
}

impl FromIterator<(String, Option<String>)> for PartitionValues {
    fn from_iter<I: IntoIterator<Item = (String, Option<String>)>>(iter: I) -> Self {
        let mut values = PartitionValues::new();
        for (k, v) in iter {
            values.insert(k, v);
        }
        values
    }
}

impl IntoIterator for PartitionValues {
    type Item = (String, Option<String>);
    type IntoIter = std::vec::IntoIter<(String, Option<String>)>;

    /// Entries in name order.
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a> IntoIterator for &'a PartitionValues {
    type Item = (&'a String, &'a Option<String>);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Option<String>)>,
        fn(&'a (String, Option<String>)) -> (&'a String, &'a Option<String>),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl Serialize for PartitionValues {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for PartitionValues {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;

        impl<'de> Visitor<'de> for Entries {
            type Value = PartitionValues;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of partition column names to strings or nulls")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut values = PartitionValues {
                    entries: Vec::with_capacity(access.size_hint().unwrap_or(0).min(64)),
                };
                while let Some((k, v)) = access.next_entry::<String, Option<String>>()? {
                    values.insert(k, v);
                }
                // JSON gives no size hint: the first entry reserved room for four, and a log
                // holds one map per file.
                values.entries.shrink_to_fit();
                Ok(values)
            }
        }

        deserializer.deserialize_map(Entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_a_json_object_in_name_order() {
        let text = r#"{"b":"2","a":null,"c":"x","b":"3"}"#;
        let v: PartitionValues = serde_json::from_str(text).unwrap_or_default();
        assert_eq!(v.len(), 3);
        assert_eq!(v.get("a"), Some(&None));
        assert_eq!(v.get("b"), Some(&Some("3".to_string())));
        assert_eq!(v.get("z"), None);
        assert!(v.contains_key("c") && !v.contains_key("d"));
        let keys: Vec<&String> = v.keys().collect();
        assert_eq!(keys, ["a", "b", "c"]);
        let out = serde_json::to_string(&v).unwrap_or_default();
        assert_eq!(out, r#"{"a":null,"b":"3","c":"x"}"#);
        assert!(serde_json::from_str::<PartitionValues>(r#"{"a":1}"#).is_err());
        assert!(serde_json::from_str::<PartitionValues>("[]").is_err());
    }

    #[test]
    fn insert_replaces_and_collect_keeps_the_last() {
        let mut v = PartitionValues::new();
        assert_eq!(v.insert("p".into(), Some("1".into())), None);
        assert_eq!(v.insert("p".into(), None), Some(Some("1".into())));
        let collected: PartitionValues =
            [("q".to_string(), None), ("q".to_string(), Some("2".into()))]
                .into_iter()
                .collect();
        assert_eq!(collected.get("q"), Some(&Some("2".to_string())));
        assert_eq!((&collected).into_iter().count(), 1);
    }
}
