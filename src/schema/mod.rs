//! Delta table schemas: the schema model and its JSON form, conversion to Arrow, column
//! mapping, and partition value parsing.
//!
//! Everything here is pure: no I/O, no async, no clock.
//!
//! - `types`: [`StructType`] and friends, parsed from `metaData.schemaString` with
//!   [`parse_schema`]; `field_index`: [`FieldIndex`], its fields by name.
//! - `arrow`: the logical Arrow schema ([`StructType::to_arrow`]), matching `delta_kernel`.
//! - `column_mapping`: [`ColumnMappingMode`], physical names and field ids, and the physical
//!   schema of data files ([`StructType::physical_arrow_schema`]).
//! - `output_types`: [`OutputTypes`], the Arrow types strings and binaries are output as
//!   (`Utf8`/`LargeUtf8`/`Utf8View`, `Binary`/`LargeBinary`/`BinaryView`).
//! - `partition`: `add.partitionValues` strings to typed Arrow arrays
//!   (`parse_partition_value`).
//! - `cast`: column data converted to its logical Arrow type (type widening, timestamp units,
//!   encodings): the conversions Delta needs, without a general cast kernel.
#![deny(clippy::disallowed_methods, clippy::disallowed_types)] // see clippy.toml

mod arrow;
pub(crate) mod cast;
mod column_mapping;
mod field_index;
pub(crate) mod number_text;
pub(crate) mod output_types;
mod partition;
pub(crate) mod time_text;
pub(crate) mod types;

pub use column_mapping::{
    ColumnMappingMode, COLUMN_MAPPING_ID_KEY, COLUMN_MAPPING_MODE_KEY,
    COLUMN_MAPPING_PHYSICAL_NAME_KEY,
};
pub use field_index::FieldIndex;
pub use output_types::{BinaryType, OutputTypes, StringType};
pub use types::{
    parse_schema, ArrayType, DataType, DecimalType, MapType, PrimitiveType, StructField, StructType,
};

pub(crate) use arrow::PARQUET_FIELD_ID_KEY;
pub(crate) use column_mapping::{field_id, physical_name, validate_column_mapping};
pub(crate) use partition::parse_partition_value;
