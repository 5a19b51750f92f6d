//! [`FileFields`]: the top-level fields of a data file by name and by field id, built once per
//! file so that finding every read column in a wide file is linear, not a scan of the file's
//! fields per column.

use std::collections::HashMap;

use arrow_schema::{Field, Fields};

use crate::schema::PARQUET_FIELD_ID_KEY;

/// The Parquet field id an Arrow field of a data file carries, if any.
pub(super) fn arrow_field_id(field: &Field) -> Option<i64> {
    field
        .metadata()
        .get(PARQUET_FIELD_ID_KEY)
        .and_then(|v| v.parse().ok())
}

/// Field positions of a file schema; each lookup finds the first field that matches.
#[derive(Debug)]
pub(crate) struct FileFields<'a> {
    exact: HashMap<&'a str, usize>,
    folded: HashMap<String, usize>,
    ids: HashMap<i64, usize>,
}

impl<'a> FileFields<'a> {
    pub(crate) fn new(fields: &'a Fields) -> FileFields<'a> {
        let mut index = FileFields {
            exact: HashMap::with_capacity(fields.len()),
            folded: HashMap::with_capacity(fields.len()),
            ids: HashMap::new(),
        };
        for (i, f) in fields.iter().enumerate() {
            index.exact.entry(f.name().as_str()).or_insert(i);
            index
                .folded
                .entry(f.name().to_ascii_lowercase())
                .or_insert(i);
            if let Some(id) = arrow_field_id(f) {
                index.ids.entry(id).or_insert(i);
            }
        }
        index
    }

    /// The field named `name`, else the first one whose name matches ignoring ASCII case.
    pub(crate) fn named(&self, name: &str) -> Option<usize> {
        self.exact
            .get(name)
            .or_else(|| self.folded.get(&name.to_ascii_lowercase()))
            .copied()
    }

    /// The field with Parquet field id `id`.
    pub(crate) fn with_id(&self, id: i64) -> Option<usize> {
        self.ids.get(&id).copied()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use arrow_schema::DataType;

    use super::*;

    #[test]
    fn finds_by_name_case_and_id() {
        let with_id = |name: &str, id: &str| {
            Field::new(name, DataType::Int64, true).with_metadata(HashMap::from([(
                PARQUET_FIELD_ID_KEY.to_string(),
                id.to_string(),
            )]))
        };
        let fields = Fields::from(vec![
            with_id("a", "7"),
            Field::new("B", DataType::Int64, true),
            Field::new("b", DataType::Int64, true),
            with_id("c", "7"),
        ]);
        let index = FileFields::new(&fields);
        assert_eq!(index.named("a"), Some(0));
        assert_eq!(index.named("b"), Some(2));
        assert_eq!(index.named("B"), Some(1));
        assert_eq!(index.named("A"), Some(0));
        assert_eq!(index.named("z"), None);
        assert_eq!(index.with_id(7), Some(0));
        assert_eq!(index.with_id(8), None);
    }
}
