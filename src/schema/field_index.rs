//! [`FieldIndex`]: the fields of a struct by name, for code that looks up many names (a scan
//! of every column of a 200,000-column table), where [`StructType::index_of`] would scan the
//! fields once per name.

use std::collections::HashMap;

use super::types::{StructField, StructType};

/// Field positions of one struct by exact name and by ASCII-lowercased name, built once in
/// linear time; lookups match as [`StructType::index_of`] does (an exact match wins, then the
/// first match ignoring ASCII case).
#[derive(Debug)]
pub struct FieldIndex<'a> {
    fields: &'a [StructField],
    exact: HashMap<&'a str, usize>,
    folded: HashMap<String, usize>,
}

impl StructType {
    /// An index of this struct's fields by name (see [`FieldIndex`]).
    pub fn field_index(&self) -> FieldIndex<'_> {
        let mut exact = HashMap::with_capacity(self.fields.len());
        let mut folded = HashMap::with_capacity(self.fields.len());
        for (i, f) in self.fields.iter().enumerate() {
            exact.entry(f.name.as_str()).or_insert(i);
            folded.entry(f.name.to_ascii_lowercase()).or_insert(i);
        }
        FieldIndex {
            fields: &self.fields,
            exact,
            folded,
        }
    }
}

impl<'a> FieldIndex<'a> {
    /// Position of the field named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.exact
            .get(name)
            .or_else(|| self.folded.get(&name.to_ascii_lowercase()))
            .copied()
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&'a StructField> {
        self.index_of(name).and_then(|i| self.fields.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::PrimitiveType;

    #[test]
    fn matches_like_index_of() {
        let s = StructType::new(
            ["id", "Name", "name", "ÄB", "x"]
                .map(|n| StructField::new(n, PrimitiveType::Long, true)),
        );
        let index = s.field_index();
        for name in [
            "id", "ID", "Name", "name", "NAME", "ÄB", "äb", "Äb", "x", "y", "",
        ] {
            assert_eq!(index.index_of(name), s.index_of(name), "{name}");
        }
        assert_eq!(index.field("NAME").map(|f| f.name.as_str()), Some("Name"));
    }
}
