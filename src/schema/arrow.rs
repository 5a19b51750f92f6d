//! Conversion of the Delta schema model to Arrow.
//!
//! The mapping is the one `delta_kernel` (0.30) uses for a table's logical schema, so that
//! batches from this reader and from kernel have equal schemas:
//!
//! | Delta            | Arrow                                                           |
//! |------------------|-----------------------------------------------------------------|
//! | `string`         | `Utf8`                                                          |
//! | `long`, `integer`, `short`, `byte` | `Int64`, `Int32`, `Int16`, `Int8`             |
//! | `float`, `double`| `Float32`, `Float64`                                            |
//! | `boolean`        | `Boolean`                                                       |
//! | `binary`         | `Binary`                                                        |
//! | `date`           | `Date32`                                                        |
//! | `timestamp`      | `Timestamp(Microsecond, Some("UTC"))`                           |
//! | `timestamp_ntz`  | `Timestamp(Microsecond, None)`                                  |
//! | `decimal(p,s)`   | `Decimal128(p, s)`                                              |
//! | `void`           | `Null`                                                          |
//! | `variant`        | `Struct { metadata: Binary not null, value: Binary not null }`  |
//! | `array`          | `List`, item field `element` (nullable = `containsNull`)        |
//! | `map`            | `Map`, entries `key_value` (not null) of `key` (not null) and `value` (nullable = `valueContainsNull`), keys not sorted |
//!
//! Field metadata is carried over as Arrow field metadata: string values as they are, other
//! JSON values as JSON text. Like kernel, the key `parquet.field.id` becomes
//! [`PARQUET_FIELD_ID_KEY`], and `delta.columnMapping.nested.ids` is not kept as such: its
//! entries become the `PARQUET:field_id` of the `element`, `key` and `value` fields they name.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{
    DataType as ArrowDataType, Field as ArrowField, Fields, Schema as ArrowSchema, TimeUnit,
};
use serde_json::{Map, Value};

use super::types::{DataType, PrimitiveType, StructField, StructType};
use crate::error::{DeltaError, Result};

/// Arrow field metadata key of a Parquet field id (what the Parquet Arrow reader and writer
/// use).
pub const PARQUET_FIELD_ID_KEY: &str = "PARQUET:field_id";
/// Delta field metadata key of a Parquet field id (a convention of Delta writers).
pub const DELTA_PARQUET_FIELD_ID_KEY: &str = "parquet.field.id";
/// Delta field metadata key holding the field ids of the `element`, `key` and `value` fields
/// nested in an array or map, keyed by dot paths rooted at the field's name.
pub const COLUMN_MAPPING_NESTED_IDS_KEY: &str = "delta.columnMapping.nested.ids";

/// Name of the item field of an Arrow list.
pub const LIST_ELEMENT_NAME: &str = "element";
/// Name of the entries field of an Arrow map.
pub const MAP_ENTRIES_NAME: &str = "key_value";
/// Name of the key field of an Arrow map.
pub const MAP_KEY_NAME: &str = "key";
/// Name of the value field of an Arrow map.
pub const MAP_VALUE_NAME: &str = "value";

impl StructType {
    /// The Arrow schema of this (logical) schema.
    pub fn to_arrow(&self) -> Result<ArrowSchema> {
        Ok(ArrowSchema::new(self.to_arrow_fields()?))
    }

    /// The Arrow fields of this struct.
    pub fn to_arrow_fields(&self) -> Result<Fields> {
        self.fields
            .iter()
            .map(StructField::to_arrow)
            .collect::<Result<Vec<_>>>()
            .map(Fields::from)
    }
}

impl StructField {
    /// The Arrow field of this field, with its metadata.
    pub fn to_arrow(&self) -> Result<ArrowField> {
        let data_type = field_type_to_arrow(self, &self.name, &self.data_type)?;
        Ok(
            ArrowField::new(self.name.as_str(), data_type, self.nullable)
                .with_metadata(arrow_field_metadata(&self.metadata)),
        )
    }
}

impl DataType {
    /// The Arrow type of this type.
    ///
    /// Arrays and maps converted here carry no nested field ids (those live on the enclosing
    /// field; see [`StructField::to_arrow`]).
    pub fn to_arrow(&self) -> Result<ArrowDataType> {
        Ok(match self {
            DataType::Primitive(p) => p.to_arrow(),
            DataType::Struct(s) => ArrowDataType::Struct(s.to_arrow_fields()?),
            DataType::Array(a) => list_type(a.element_type.to_arrow()?, a.contains_null, None),
            DataType::Map(m) => map_type(
                m.key_type.to_arrow()?,
                m.value_type.to_arrow()?,
                m.value_contains_null,
                None,
                None,
            ),
        })
    }
}

impl PrimitiveType {
    /// The Arrow type of this primitive type.
    pub fn to_arrow(&self) -> ArrowDataType {
        match self {
            PrimitiveType::String => ArrowDataType::Utf8,
            PrimitiveType::Long => ArrowDataType::Int64,
            PrimitiveType::Integer => ArrowDataType::Int32,
            PrimitiveType::Short => ArrowDataType::Int16,
            PrimitiveType::Byte => ArrowDataType::Int8,
            PrimitiveType::Float => ArrowDataType::Float32,
            PrimitiveType::Double => ArrowDataType::Float64,
            PrimitiveType::Boolean => ArrowDataType::Boolean,
            PrimitiveType::Binary => ArrowDataType::Binary,
            PrimitiveType::Date => ArrowDataType::Date32,
            PrimitiveType::Timestamp => {
                ArrowDataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
            PrimitiveType::TimestampNtz => ArrowDataType::Timestamp(TimeUnit::Microsecond, None),
            // The scale is at most 38 (checked when the type was made), so it fits an i8.
            PrimitiveType::Decimal(d) => {
                ArrowDataType::Decimal128(d.precision(), i8::try_from(d.scale()).unwrap_or(38))
            }
            PrimitiveType::Variant => ArrowDataType::Struct(Fields::from(vec![
                ArrowField::new("metadata", ArrowDataType::Binary, false),
                ArrowField::new("value", ArrowDataType::Binary, false),
            ])),
            PrimitiveType::Void => ArrowDataType::Null,
        }
    }
}

/// Converts Delta field metadata to Arrow field metadata: strings as they are, other values as
/// JSON text, `parquet.field.id` renamed to `PARQUET:field_id`, nested ids dropped.
pub(crate) fn arrow_field_metadata(metadata: &Map<String, Value>) -> HashMap<String, String> {
    metadata
        .iter()
        .filter(|(key, _)| key.as_str() != COLUMN_MAPPING_NESTED_IDS_KEY)
        .map(|(key, value)| {
            let key = if key == DELTA_PARQUET_FIELD_ID_KEY {
                PARQUET_FIELD_ID_KEY.to_string()
            } else {
                key.clone()
            };
            let value = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (key, value)
        })
        .collect()
}

/// The Arrow type of `data_type`, found at dot path `path` under `ancestor` (the nearest
/// enclosing struct field): the `element`, `key` and `value` fields of arrays and maps get the
/// field ids that `ancestor`'s nested-ids metadata gives for their paths.
pub(crate) fn field_type_to_arrow(
    ancestor: &StructField,
    path: &str,
    data_type: &DataType,
) -> Result<ArrowDataType> {
    match data_type {
        DataType::Array(a) => {
            let element_path = format!("{path}.{LIST_ELEMENT_NAME}");
            let element = field_type_to_arrow(ancestor, &element_path, &a.element_type)?;
            let element_id = nested_field_id(ancestor, &element_path)?;
            Ok(list_type(element, a.contains_null, element_id))
        }
        DataType::Map(m) => {
            let key_path = format!("{path}.{MAP_KEY_NAME}");
            let value_path = format!("{path}.{MAP_VALUE_NAME}");
            let key = field_type_to_arrow(ancestor, &key_path, &m.key_type)?;
            let value = field_type_to_arrow(ancestor, &value_path, &m.value_type)?;
            Ok(map_type(
                key,
                value,
                m.value_contains_null,
                nested_field_id(ancestor, &key_path)?,
                nested_field_id(ancestor, &value_path)?,
            ))
        }
        other => other.to_arrow(),
    }
}

/// The field id at `path` in `field`'s `delta.columnMapping.nested.ids`, if there is one.
pub(crate) fn nested_field_id(field: &StructField, path: &str) -> Result<Option<i64>> {
    let Some(ids) = field.metadata.get(COLUMN_MAPPING_NESTED_IDS_KEY) else {
        return Ok(None);
    };
    let Value::Object(ids) = ids else {
        return Err(DeltaError::invalid_schema(format!(
            "'{COLUMN_MAPPING_NESTED_IDS_KEY}' of field '{}' must be a JSON object",
            field.name
        )));
    };
    match ids.get(path) {
        None => Ok(None),
        Some(id) => id.as_i64().map(Some).ok_or_else(|| {
            DeltaError::invalid_schema(format!(
                "'{COLUMN_MAPPING_NESTED_IDS_KEY}' entry '{path}' of field '{}' must be an \
                 integer, found {id}",
                field.name
            ))
        }),
    }
}

/// Arrow metadata holding a Parquet field id, or none.
pub(crate) fn field_id_metadata(id: Option<i64>) -> HashMap<String, String> {
    id.map(|id| HashMap::from([(PARQUET_FIELD_ID_KEY.to_string(), id.to_string())]))
        .unwrap_or_default()
}

/// An Arrow list type with an `element` item field.
pub(crate) fn list_type(
    element: ArrowDataType,
    contains_null: bool,
    element_id: Option<i64>,
) -> ArrowDataType {
    let item = ArrowField::new(LIST_ELEMENT_NAME, element, contains_null)
        .with_metadata(field_id_metadata(element_id));
    ArrowDataType::List(Arc::new(item))
}

/// An Arrow map type with `key_value` entries of a non-null `key` and a `value`, keys not
/// sorted.
pub(crate) fn map_type(
    key: ArrowDataType,
    value: ArrowDataType,
    value_contains_null: bool,
    key_id: Option<i64>,
    value_id: Option<i64>,
) -> ArrowDataType {
    let key = ArrowField::new(MAP_KEY_NAME, key, false).with_metadata(field_id_metadata(key_id));
    let value = ArrowField::new(MAP_VALUE_NAME, value, value_contains_null)
        .with_metadata(field_id_metadata(value_id));
    let entries = ArrowField::new(
        MAP_ENTRIES_NAME,
        ArrowDataType::Struct(Fields::from(vec![key, value])),
        false,
    );
    ArrowDataType::Map(Arc::new(entries), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::types::parse_schema;

    fn field<'a>(schema: &'a ArrowSchema, name: &str) -> Result<&'a ArrowField> {
        schema
            .field_with_name(name)
            .map_err(|e| DeltaError::invalid_schema(e.to_string()))
    }

    #[test]
    fn primitive_mapping() -> Result<()> {
        use ArrowDataType as A;
        let cases = [
            (PrimitiveType::String, A::Utf8),
            (PrimitiveType::Long, A::Int64),
            (PrimitiveType::Integer, A::Int32),
            (PrimitiveType::Short, A::Int16),
            (PrimitiveType::Byte, A::Int8),
            (PrimitiveType::Float, A::Float32),
            (PrimitiveType::Double, A::Float64),
            (PrimitiveType::Boolean, A::Boolean),
            (PrimitiveType::Binary, A::Binary),
            (PrimitiveType::Date, A::Date32),
            (
                PrimitiveType::Timestamp,
                A::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            ),
            (
                PrimitiveType::TimestampNtz,
                A::Timestamp(TimeUnit::Microsecond, None),
            ),
            (PrimitiveType::decimal(38, 38)?, A::Decimal128(38, 38)),
            (PrimitiveType::decimal(10, 2)?, A::Decimal128(10, 2)),
            (PrimitiveType::Void, A::Null),
        ];
        for (delta, arrow) in cases {
            assert_eq!(delta.to_arrow(), arrow, "{delta}");
            assert_eq!(DataType::from(delta).to_arrow()?, arrow, "{delta}");
        }
        let A::Struct(fields) = PrimitiveType::Variant.to_arrow() else {
            return Err(DeltaError::invalid_schema("variant is not a struct"));
        };
        assert_eq!(fields.len(), 2);
        assert_eq!(
            (
                fields[0].name().as_str(),
                fields[0].data_type(),
                fields[0].is_nullable()
            ),
            ("metadata", &A::Binary, false)
        );
        assert_eq!(
            (
                fields[1].name().as_str(),
                fields[1].data_type(),
                fields[1].is_nullable()
            ),
            ("value", &A::Binary, false)
        );
        Ok(())
    }

    #[test]
    fn nested_mapping() -> Result<()> {
        let schema = parse_schema(
            r#"{"type":"struct","fields":[
            {"name":"a","type":{"type":"array","elementType":"integer","containsNull":false},
             "nullable":true,"metadata":{}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":
              {"type":"struct","fields":[{"name":"x","type":"double","nullable":false,"metadata":{}}]},
              "valueContainsNull":true},"nullable":false,"metadata":{}}]}"#,
        )?;
        let arrow = schema.to_arrow()?;
        let a = field(&arrow, "a")?;
        let ArrowDataType::List(item) = a.data_type() else {
            return Err(DeltaError::invalid_schema("a is not a list"));
        };
        assert_eq!(item.name(), "element");
        assert_eq!(item.data_type(), &ArrowDataType::Int32);
        assert!(!item.is_nullable());
        assert!(a.is_nullable());

        let m = field(&arrow, "m")?;
        assert!(!m.is_nullable());
        let ArrowDataType::Map(entries, sorted) = m.data_type() else {
            return Err(DeltaError::invalid_schema("m is not a map"));
        };
        assert!(!sorted);
        assert_eq!(entries.name(), "key_value");
        assert!(!entries.is_nullable());
        let ArrowDataType::Struct(kv) = entries.data_type() else {
            return Err(DeltaError::invalid_schema("entries are not a struct"));
        };
        assert_eq!(kv[0].name(), "key");
        assert!(!kv[0].is_nullable());
        assert_eq!(kv[0].data_type(), &ArrowDataType::Utf8);
        assert_eq!(kv[1].name(), "value");
        assert!(kv[1].is_nullable());
        assert_eq!(
            kv[1].data_type(),
            &ArrowDataType::Struct(Fields::from(vec![ArrowField::new(
                "x",
                ArrowDataType::Float64,
                false
            )]))
        );
        Ok(())
    }

    #[test]
    fn metadata_is_carried_over() -> Result<()> {
        let schema = parse_schema(
            r#"{"type":"struct","fields":[
            {"name":"c","type":{"type":"array","elementType":"long","containsNull":true},
             "nullable":true,"metadata":{
               "comment":"hello","delta.columnMapping.id":7,"flag":true,
               "parquet.field.id":7,"obj":{"k":[1,2]},
               "delta.columnMapping.nested.ids":{"c.element":8}}}]}"#,
        )?;
        let arrow = schema.to_arrow()?;
        let c = field(&arrow, "c")?;
        let md = c.metadata();
        assert_eq!(md.get("comment").map(String::as_str), Some("hello"));
        assert_eq!(
            md.get("delta.columnMapping.id").map(String::as_str),
            Some("7")
        );
        assert_eq!(md.get("flag").map(String::as_str), Some("true"));
        assert_eq!(md.get("obj").map(String::as_str), Some(r#"{"k":[1,2]}"#));
        assert_eq!(md.get(PARQUET_FIELD_ID_KEY).map(String::as_str), Some("7"));
        assert!(!md.contains_key("parquet.field.id"));
        assert!(!md.contains_key(COLUMN_MAPPING_NESTED_IDS_KEY));
        let ArrowDataType::List(item) = c.data_type() else {
            return Err(DeltaError::invalid_schema("c is not a list"));
        };
        assert_eq!(
            item.metadata()
                .get(PARQUET_FIELD_ID_KEY)
                .map(String::as_str),
            Some("8")
        );
        Ok(())
    }

    #[test]
    fn bad_nested_ids_fail() {
        let field = StructField::new("c", DataType::array(PrimitiveType::Long, true), true)
            .with_metadata(COLUMN_MAPPING_NESTED_IDS_KEY, "nope");
        assert!(matches!(
            field.to_arrow(),
            Err(DeltaError::InvalidSchema { .. })
        ));
        let field = StructField::new("c", DataType::array(PrimitiveType::Long, true), true)
            .with_metadata(
                COLUMN_MAPPING_NESTED_IDS_KEY,
                serde_json::json!({"c.element": "x"}),
            );
        assert!(matches!(
            field.to_arrow(),
            Err(DeltaError::InvalidSchema { .. })
        ));
    }
}
