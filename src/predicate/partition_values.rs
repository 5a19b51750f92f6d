//! [`TypedPartitionValues`]: a file's partition values parsed once to their column types.
//!
//! The log keeps `add.partitionValues` as the protocol writes them (serialized strings keyed
//! by physical column name, [`crate::log::PartitionValues`]). Everything after the log —
//! file skipping, row-group pruning, the constants a read adds to its batches, DataFusion's
//! dynamic filters — uses this one typed form, keyed by logical column name, built by
//! [`TypedPartitionValues::parse`] with one lookup rule
//! ([`crate::log::PartitionValues::value_of`]).

use arrow_array::ArrayRef;
use arrow_schema::DataType;

use super::scalar::Scalar;
use crate::error::{DeltaError, Phase, Result};
use crate::log::PartitionValues;
use crate::schema::{parse_partition_value, physical_name, ColumnMappingMode, StructType};

/// The typed partition values of one file: each partition column's value (a
/// [`Scalar::Null`] of its type for a null or missing value), in the table's partition
/// column order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypedPartitionValues {
    /// Logical column name (as the schema spells it) and value.
    entries: Vec<(String, Scalar)>,
}

impl TypedPartitionValues {
    /// No partition values (an unpartitioned table).
    pub fn none() -> Self {
        Self::default()
    }

    /// Parses `raw` (an `add`'s `partitionValues`) for `partition_columns` (logical names) of
    /// `schema`: each column's value looked up by [`PartitionValues::value_of`] and parsed to
    /// its type. A missing entry is a null; a value that does not parse is an error.
    pub fn parse(
        raw: &PartitionValues,
        schema: &StructType,
        partition_columns: &[String],
        mode: ColumnMappingMode,
    ) -> Result<Self> {
        let mut entries = Vec::with_capacity(partition_columns.len());
        for name in partition_columns {
            let field = schema.field(name).ok_or_else(|| {
                DeltaError::invalid_schema(format!(
                    "partition column '{name}' is not in the table schema"
                ))
            })?;
            let ty = field.data_type.as_primitive().ok_or_else(|| {
                DeltaError::invalid_schema(format!(
                    "partition column '{name}' has the non-primitive type {}",
                    field.data_type
                ))
            })?;
            let text = raw.value_of(physical_name(field, mode)?, &field.name);
            let value = Scalar::from_array(parse_partition_value(text, ty)?.as_ref(), 0)?;
            entries.push((field.name.clone(), value));
        }
        Ok(TypedPartitionValues { entries })
    }

    /// From values already typed, for `(logical name, value)` pairs.
    pub fn from_entries(entries: impl IntoIterator<Item = (String, Scalar)>) -> Self {
        TypedPartitionValues {
            entries: entries.into_iter().collect(),
        }
    }

    /// The value of partition column `name` (logical, as the schema spells it); `None` when
    /// it is not a partition column.
    pub fn get(&self, name: &str) -> Option<&Scalar> {
        self.entries.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The partition columns and their values, in the table's partition column order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Scalar)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether there are no partition columns.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of partition column `name` as a length-1 array of `data_type` (the type the
    /// scan outputs the column as, a string view say); `None` when it is not a partition
    /// column.
    pub fn array(&self, name: &str, data_type: &DataType) -> Result<Option<ArrayRef>> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let array = value.to_array()?;
        if array.data_type() == data_type {
            return Ok(Some(array));
        }
        crate::schema::cast::cast(&array, data_type)
            .map(Some)
            .map_err(|source| DeltaError::Arrow {
                phase: Phase::Plan,
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;

    use super::*;
    use crate::schema::{PrimitiveType, StructField, COLUMN_MAPPING_PHYSICAL_NAME_KEY};

    fn schema() -> StructType {
        StructType::new([
            StructField::new("Region", PrimitiveType::String, true)
                .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-1"),
            StructField::new("day", PrimitiveType::Date, true)
                .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-2"),
            StructField::new("n", PrimitiveType::Long, true)
                .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-3"),
        ])
    }

    fn raw(entries: &[(&str, Option<&str>)]) -> PartitionValues {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect()
    }

    fn parse(entries: &[(&str, Option<&str>)]) -> Result<TypedPartitionValues> {
        let columns = ["Region".to_string(), "day".to_string(), "n".to_string()];
        TypedPartitionValues::parse(&raw(entries), &schema(), &columns, ColumnMappingMode::Name)
    }

    #[test]
    fn the_physical_name_wins_then_the_logical_name_then_null() -> Result<()> {
        let values = parse(&[
            ("col-1", Some("NL")),
            ("Region", Some("DE")),
            ("day", Some("2024-01-02")),
        ])?;
        assert_eq!(values.get("Region"), Some(&Scalar::String("NL".into())));
        // Keyed by logical name (a writer that ignored column mapping).
        assert_eq!(values.get("day"), Some(&Scalar::Date(19724)));
        // No entry at all: a null of the column's type.
        assert_eq!(values.get("n"), Some(&Scalar::Null(PrimitiveType::Long)));
        // Not a partition column.
        assert_eq!(values.get("other"), None);
        // Names are as the schema spells them, in partition column order.
        let names: Vec<&str> = values.iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["Region", "day", "n"]);
        Ok(())
    }

    #[test]
    fn an_explicit_null_and_an_empty_string_are_nulls() -> Result<()> {
        let values = parse(&[("col-1", None), ("col-2", Some("")), ("col-3", Some(""))])?;
        assert!(values.iter().all(|(_, v)| v.is_null()));
        Ok(())
    }

    #[test]
    fn values_that_do_not_parse_are_errors() {
        assert!(parse(&[("col-3", Some("seven"))]).is_err());
        assert!(parse(&[("col-2", Some("2024-13-45"))]).is_err());
        let columns = ["missing".to_string()];
        let missing =
            TypedPartitionValues::parse(&raw(&[]), &schema(), &columns, ColumnMappingMode::Name);
        assert!(missing.is_err());
    }

    #[test]
    fn arrays_take_the_type_the_scan_outputs() -> Result<()> {
        let values = parse(&[("col-1", Some("NL")), ("col-3", Some("7"))])?;
        let view = values
            .array("Region", &DataType::Utf8View)?
            .ok_or_else(|| DeltaError::invalid_schema("no value"))?;
        assert_eq!(view.as_string_view().value(0), "NL");
        let long = values
            .array("n", &DataType::Int64)?
            .ok_or_else(|| DeltaError::invalid_schema("no value"))?;
        assert_eq!(long.len(), 1);
        let null_day = values
            .array("day", &DataType::Date32)?
            .ok_or_else(|| DeltaError::invalid_schema("no value"))?;
        assert_eq!(null_day.null_count(), 1);
        assert!(values.array("other", &DataType::Utf8)?.is_none());
        Ok(())
    }
}
