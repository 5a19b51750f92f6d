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
