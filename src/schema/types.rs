//! The Delta schema model and its JSON form.
//!
//! A table's schema is stored in `metaData.schemaString` as JSON, in the subset of Spark SQL's
//! JSON schema representation that the Delta protocol describes under "Schema Serialization
//! Format". This file owns the Rust model of that JSON ([`StructType`], [`StructField`],
//! [`DataType`], [`PrimitiveType`], [`ArrayType`], [`MapType`]), its (de)serialization, and the
//! validation done while parsing (known type names, decimal precision and scale, no two fields
//! of a struct whose names differ only by case).

use std::collections::HashSet;
use std::fmt;

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{DeltaError, Result};
use crate::limits::json_depth;

/// Largest decimal precision Delta allows (that of a 128-bit decimal).
pub const MAX_DECIMAL_PRECISION: u8 = 38;

/// Parses a Delta schema string (`metaData.schemaString`) into a [`StructType`].
///
/// Unknown type names, malformed JSON, invalid decimals and duplicate field names all fail
/// with [`DeltaError::InvalidSchema`]; JSON nested deeper than
/// [`MAX_JSON_DEPTH`](crate::limits::MAX_JSON_DEPTH) with [`DeltaError::LimitExceeded`].
pub fn parse_schema(schema_string: &str) -> Result<StructType> {
    serde_json::from_str(schema_string).map_err(|e| {
        let depth = "JSON nesting depth of the schemaString";
        json_depth::too_deep(schema_string.as_bytes(), depth, None).unwrap_or_else(|| {
            DeltaError::invalid_schema(format!("cannot parse schemaString: {e}"))
        })
    })
}

/// A struct: the top-level schema of a table, or the type of a nested struct column.
///
/// JSON form: `{"type": "struct", "fields": [...]}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// The fields, in schema order.
    pub fields: Vec<StructField>,
}

impl StructType {
    /// A struct of the given fields.
    pub fn new(fields: impl IntoIterator<Item = StructField>) -> Self {
        StructType {
            fields: fields.into_iter().collect(),
        }
    }

    /// The field named `name`. An exact match wins; otherwise the names are compared ignoring
    /// ASCII case, as Delta column names are case-insensitive.
    pub fn field(&self, name: &str) -> Option<&StructField> {
        self.index_of(name).and_then(|i| self.fields.get(i))
    }

    /// Position of the field named `name`, matched as in [`StructType::field`].
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name).or_else(|| {
            self.fields
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(name))
        })
    }

    /// The names of the top-level fields, in schema order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.fields.iter().map(|f| f.name.as_str())
    }

    /// Number of top-level fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether the struct has no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Fails if two fields have names that differ only by case (Delta column names are
    /// case-insensitive). Only this level is checked.
    fn check_unique_names(&self) -> Result<()> {
        let mut seen = HashSet::with_capacity(self.fields.len());
        for field in &self.fields {
            if !seen.insert(field.name.to_lowercase()) {
                return Err(DeltaError::invalid_schema(format!(
                    "duplicate field name '{}' (names are case-insensitive)",
                    field.name
                )));
            }
        }
        Ok(())
    }
}

/// One field of a struct.
///
/// JSON form: `{"name": ..., "type": ..., "nullable": ..., "metadata": {...}}`; `metadata` may
/// be absent (read as empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructField {
    /// The field's (logical) name.
    pub name: String,
    /// The field's type.
    #[serde(rename = "type")]
    pub data_type: DataType,
    /// Whether the field may be null.
    pub nullable: bool,
    /// Free-form field metadata (column mapping ids and physical names, invariants, ...).
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

impl StructField {
    /// A field with empty metadata.
    pub fn new(name: impl Into<String>, data_type: impl Into<DataType>, nullable: bool) -> Self {
        StructField {
            name: name.into(),
            data_type: data_type.into(),
            nullable,
            metadata: Map::new(),
        }
    }

    /// This field with `key` set to `value` in its metadata.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}

/// The type of a field, array element or map key/value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DataType {
    /// A primitive (non-nested) type; JSON form is a string such as `"long"`.
    Primitive(PrimitiveType),
    /// A nested struct.
    Struct(Box<StructType>),
    /// An array.
    Array(Box<ArrayType>),
    /// A map.
    Map(Box<MapType>),
}

impl DataType {
    /// The primitive type, if this is one.
    pub fn as_primitive(&self) -> Option<&PrimitiveType> {
        match self {
            DataType::Primitive(p) => Some(p),
            _ => None,
        }
    }

    /// An array type.
    pub fn array(element_type: impl Into<DataType>, contains_null: bool) -> Self {
        DataType::Array(Box::new(ArrayType {
            element_type: element_type.into(),
            contains_null,
        }))
    }

    /// A map type.
    pub fn map(
        key_type: impl Into<DataType>,
        value_type: impl Into<DataType>,
        value_contains_null: bool,
    ) -> Self {
        DataType::Map(Box::new(MapType {
            key_type: key_type.into(),
            value_type: value_type.into(),
            value_contains_null,
        }))
    }
}

impl From<PrimitiveType> for DataType {
    fn from(p: PrimitiveType) -> Self {
        DataType::Primitive(p)
    }
}

impl From<StructType> for DataType {
    fn from(s: StructType) -> Self {
        DataType::Struct(Box::new(s))
    }
}

impl From<ArrayType> for DataType {
    fn from(a: ArrayType) -> Self {
        DataType::Array(Box::new(a))
    }
}

impl From<MapType> for DataType {
    fn from(m: MapType) -> Self {
        DataType::Map(Box::new(m))
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Primitive(p) => write!(f, "{p}"),
            DataType::Struct(s) => {
                f.write_str("struct<")?;
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", field.name, field.data_type)?;
                }
                f.write_str(">")
            }
            DataType::Array(a) => write!(f, "array<{}>", a.element_type),
            DataType::Map(m) => write!(f, "map<{}, {}>", m.key_type, m.value_type),
        }
    }
}

/// An array type.
///
/// JSON form: `{"type": "array", "elementType": ..., "containsNull": ...}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArrayType {
    /// Type of the elements.
    pub element_type: DataType,
    /// Whether elements may be null (read as `true` when absent).
    #[serde(default = "default_true")]
    pub contains_null: bool,
}

/// A map type.
///
/// JSON form: `{"type": "map", "keyType": ..., "valueType": ..., "valueContainsNull": ...}`.
/// Keys are never null.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MapType {
    /// Type of the keys.
    pub key_type: DataType,
    /// Type of the values.
    pub value_type: DataType,
    /// Whether values may be null (read as `true` when absent).
    #[serde(default = "default_true")]
    pub value_contains_null: bool,
}

fn default_true() -> bool {
    true
}

/// A decimal type: `precision` digits in all, `scale` of them after the point.
///
/// Always valid: `1 <= precision <= 38` and `scale <= precision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecimalType {
    precision: u8,
    scale: u8,
}

impl DecimalType {
    /// A decimal type, checking `1 <= precision <= 38` and `scale <= precision`.
    pub fn try_new(precision: u8, scale: u8) -> Result<Self> {
        if precision == 0 || precision > MAX_DECIMAL_PRECISION {
            return Err(DeltaError::invalid_schema(format!(
                "decimal precision must be between 1 and {MAX_DECIMAL_PRECISION}, found {precision}"
            )));
        }
        if scale > precision {
            return Err(DeltaError::invalid_schema(format!(
                "decimal scale must be between 0 and the precision {precision}, found {scale}"
            )));
        }
        Ok(DecimalType { precision, scale })
    }

    /// Total number of digits.
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// Number of digits after the decimal point.
    pub fn scale(&self) -> u8 {
        self.scale
    }
}

/// A primitive (non-nested) Delta type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PrimitiveType {
    /// `string`: UTF-8 text.
    String,
    /// `long`: 64-bit signed integer.
    Long,
    /// `integer`: 32-bit signed integer.
    Integer,
    /// `short`: 16-bit signed integer.
    Short,
    /// `byte`: 8-bit signed integer.
    Byte,
    /// `float`: 32-bit IEEE 754 floating point.
    Float,
    /// `double`: 64-bit IEEE 754 floating point.
    Double,
    /// `boolean`.
    Boolean,
    /// `binary`: bytes.
    Binary,
    /// `date`: a calendar date without time zone.
    Date,
    /// `timestamp`: microseconds since the epoch, adjusted to UTC.
    Timestamp,
    /// `timestamp_ntz`: microseconds since the epoch, without time zone (`timestampNtz`
    /// feature).
    TimestampNtz,
    /// `decimal(p,s)`.
    Decimal(DecimalType),
    /// `variant`: semi-structured data (`variantType` feature), stored unshredded as binary
    /// `metadata` and `value`.
    Variant,
    /// `void`: a column that is always null (Spark's `NullType`).
    Void,
}

impl PrimitiveType {
    /// A decimal type, checking precision and scale.
    pub fn decimal(precision: u8, scale: u8) -> Result<Self> {
        Ok(PrimitiveType::Decimal(DecimalType::try_new(
            precision, scale,
        )?))
    }

    /// Parses a primitive type name as written in schema JSON (`"long"`, `"decimal(10,2)"`).
    pub fn from_type_name(name: &str) -> Result<Self> {
        let ty = match name {
            "string" => PrimitiveType::String,
            "long" => PrimitiveType::Long,
            "integer" => PrimitiveType::Integer,
            "short" => PrimitiveType::Short,
            "byte" => PrimitiveType::Byte,
            "float" => PrimitiveType::Float,
            "double" => PrimitiveType::Double,
            "boolean" => PrimitiveType::Boolean,
            "binary" => PrimitiveType::Binary,
            "date" => PrimitiveType::Date,
            "timestamp" => PrimitiveType::Timestamp,
            "timestamp_ntz" => PrimitiveType::TimestampNtz,
            "variant" => PrimitiveType::Variant,
            "void" => PrimitiveType::Void,
            // Spark's name for its default decimal, decimal(10,0).
            "decimal" => PrimitiveType::decimal(10, 0)?,
            other => match parse_decimal_name(other) {
                Some(parsed) => {
                    let (precision, scale) = parsed?;
                    PrimitiveType::decimal(precision, scale)?
                }
                None => {
                    return Err(DeltaError::invalid_schema(format!(
                        "unsupported Delta data type '{other}'"
                    )))
                }
            },
        };
        Ok(ty)
    }

    /// The name of the type as written in schema JSON.
    pub fn type_name(&self) -> String {
        self.to_string()
    }
}

/// `Some` when `name` looks like `decimal(...)`, with the parsed precision and scale or why they
/// cannot be parsed; `None` for other names.
fn parse_decimal_name(name: &str) -> Option<Result<(u8, u8)>> {
    let inner = name.strip_prefix("decimal")?.trim_start();
    let inner = inner.strip_prefix('(')?.strip_suffix(')')?;
    let bad = || DeltaError::invalid_schema(format!("invalid decimal type '{name}'"));
    let mut parts = inner.split(',');
    let precision = parts.next().and_then(|p| p.trim().parse::<u8>().ok());
    let scale = parts.next().and_then(|s| s.trim().parse::<u8>().ok());
    Some(match (precision, scale, parts.next()) {
        (Some(p), Some(s), None) => Ok((p, s)),
        _ => Err(bad()),
    })
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            PrimitiveType::String => "string",
            PrimitiveType::Long => "long",
            PrimitiveType::Integer => "integer",
            PrimitiveType::Short => "short",
            PrimitiveType::Byte => "byte",
            PrimitiveType::Float => "float",
            PrimitiveType::Double => "double",
            PrimitiveType::Boolean => "boolean",
            PrimitiveType::Binary => "binary",
            PrimitiveType::Date => "date",
            PrimitiveType::Timestamp => "timestamp",
            PrimitiveType::TimestampNtz => "timestamp_ntz",
            PrimitiveType::Variant => "variant",
            PrimitiveType::Void => "void",
            PrimitiveType::Decimal(d) => {
                return write!(f, "decimal({},{})", d.precision, d.scale);
            }
        };
        f.write_str(name)
    }
}

/// A serde error carrying the reason of a schema error (without the "invalid table schema"
/// prefix, which [`parse_schema`] adds once).
fn de_error<E: serde::de::Error>(error: DeltaError) -> E {
    match error {
        DeltaError::InvalidSchema { reason } => E::custom(reason),
        other => E::custom(other),
    }
}

impl Serialize for PrimitiveType {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PrimitiveType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        PrimitiveType::from_type_name(&name).map_err(de_error)
    }
}

impl Serialize for DataType {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            DataType::Primitive(p) => p.serialize(serializer),
            DataType::Struct(s) => s.serialize(serializer),
            DataType::Array(a) => a.serialize(serializer),
            DataType::Map(m) => m.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for DataType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        // A string is a primitive type; an object is dispatched on its "type" key.
        let value = Value::deserialize(deserializer)?;
        match value {
            Value::String(name) => PrimitiveType::from_type_name(&name)
                .map(DataType::Primitive)
                .map_err(de_error),
            Value::Object(ref map) => {
                let kind = match map.get("type") {
                    Some(Value::String(kind)) => kind.clone(),
                    _ => return Err(D::Error::custom("a nested type object needs a \"type\"")),
                };
                match kind.as_str() {
                    "struct" => StructType::deserialize(value)
                        .map(DataType::from)
                        .map_err(D::Error::custom),
                    "array" => ArrayType::deserialize(value)
                        .map(DataType::from)
                        .map_err(D::Error::custom),
                    "map" => MapType::deserialize(value)
                        .map(DataType::from)
                        .map_err(D::Error::custom),
                    other => Err(D::Error::custom(format!(
                        "unsupported Delta data type '{other}'"
                    ))),
                }
            }
            other => Err(D::Error::custom(format!(
                "a data type must be a string or an object, found {other}"
            ))),
        }
    }
}

impl Serialize for StructType {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("StructType", 2)?;
        s.serialize_field("type", "struct")?;
        s.serialize_field("fields", &self.fields)?;
        s.end()
    }
}

/// The JSON shape of a struct, before validation.
#[derive(Deserialize)]
struct StructTypeJson {
    #[serde(rename = "type")]
    type_name: String,
    fields: Vec<StructField>,
}

impl<'de> Deserialize<'de> for StructType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let json = StructTypeJson::deserialize(deserializer)?;
        if json.type_name != "struct" {
            return Err(D::Error::custom(format!(
                "expected a struct type, found type '{}'",
                json.type_name
            )));
        }
        let st = StructType {
            fields: json.fields,
        };
        st.check_unique_names().map_err(de_error)?;
        Ok(st)
    }
}

impl Serialize for ArrayType {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ArrayType", 3)?;
        s.serialize_field("type", "array")?;
        s.serialize_field("elementType", &self.element_type)?;
        s.serialize_field("containsNull", &self.contains_null)?;
        s.end()
    }
}

impl Serialize for MapType {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("MapType", 4)?;
        s.serialize_field("type", "map")?;
        s.serialize_field("keyType", &self.key_type)?;
        s.serialize_field("valueType", &self.value_type)?;
        s.serialize_field("valueContainsNull", &self.value_contains_null)?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NESTED: &str = r#"{
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": false, "metadata": {}},
            {"name": "price", "type": "decimal(10, 2)", "nullable": true, "metadata": {"comment": "eur"}},
            {"name": "tags", "type": {"type": "array", "elementType": "string", "containsNull": true},
             "nullable": true},
            {"name": "attrs", "type": {"type": "map", "keyType": "string",
             "valueType": {"type": "struct", "fields": [
                 {"name": "ts", "type": "timestamp_ntz", "nullable": true, "metadata": {}}
             ]}, "valueContainsNull": false}, "nullable": true, "metadata": {}},
            {"name": "v", "type": "variant", "nullable": true, "metadata": {}}
        ]
    }"#;

    #[test]
    fn parses_nested_schema() -> Result<()> {
        let schema = parse_schema(NESTED)?;
        assert_eq!(
            schema.field_names().collect::<Vec<_>>(),
            ["id", "price", "tags", "attrs", "v"]
        );
        let id = schema
            .field("id")
            .ok_or_else(|| DeltaError::invalid_schema("id"))?;
        assert_eq!(id.data_type, DataType::Primitive(PrimitiveType::Long));
        assert!(!id.nullable);
        let price = schema
            .field("PRICE")
            .ok_or_else(|| DeltaError::invalid_schema("p"))?;
        assert_eq!(price.data_type, PrimitiveType::decimal(10, 2)?.into());
        assert_eq!(price.metadata.get("comment"), Some(&Value::from("eur")));
        let tags = schema
            .field("tags")
            .ok_or_else(|| DeltaError::invalid_schema("t"))?;
        assert!(tags.metadata.is_empty());
        assert_eq!(tags.data_type, DataType::array(PrimitiveType::String, true));
        let attrs = schema
            .field("attrs")
            .ok_or_else(|| DeltaError::invalid_schema("a"))?;
        let value = StructType::new([StructField::new("ts", PrimitiveType::TimestampNtz, true)]);
        assert_eq!(
            attrs.data_type,
            DataType::map(PrimitiveType::String, value, false)
        );
        assert_eq!(schema.fields[4].data_type, PrimitiveType::Variant.into());
        assert_eq!(schema.index_of("v"), Some(4));
        assert!(schema.field("missing").is_none());
        Ok(())
    }

    #[test]
    fn round_trips_through_json() -> Result<()> {
        let schema = parse_schema(NESTED)?;
        let json = serde_json::to_string(&schema)
            .map_err(|e| DeltaError::invalid_schema(e.to_string()))?;
        assert!(json.contains(r#""type":"decimal(10,2)""#));
        assert!(
            json.contains(r#""type":{"type":"array","elementType":"string","containsNull":true}"#)
        );
        assert_eq!(parse_schema(&json)?, schema);
        Ok(())
    }

    #[test]
    fn all_primitive_names() -> Result<()> {
        for name in [
            "string",
            "long",
            "integer",
            "short",
            "byte",
            "float",
            "double",
            "boolean",
            "binary",
            "date",
            "timestamp",
            "timestamp_ntz",
            "variant",
            "void",
            "decimal(38,18)",
        ] {
            let ty = PrimitiveType::from_type_name(name)?;
            assert_eq!(ty.type_name(), name);
        }
        assert_eq!(
            PrimitiveType::from_type_name("decimal( 5 ,1 )")?,
            PrimitiveType::decimal(5, 1)?
        );
        assert_eq!(
            PrimitiveType::from_type_name("decimal")?,
            PrimitiveType::decimal(10, 0)?
        );
        Ok(())
    }

    #[test]
    fn rejects_unknown_types_by_name() {
        let s = r#"{"type":"struct","fields":[{"name":"a","type":"uuid","nullable":true,"metadata":{}}]}"#;
        let err = parse_schema(s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("'uuid'"), "{err}");
        let s =
            r#"{"type":"struct","fields":[{"name":"a","type":{"type":"set"},"nullable":true}]}"#;
        let err = parse_schema(s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("'set'"), "{err}");
        let err = parse_schema(r#"{"type":"array","fields":[]}"#);
        assert!(matches!(err, Err(DeltaError::InvalidSchema { .. })));
        assert!(matches!(
            parse_schema("not json"),
            Err(DeltaError::InvalidSchema { .. })
        ));
    }

    #[test]
    fn validates_decimals() {
        for bad in [
            "decimal(0,0)",
            "decimal(39,0)",
            "decimal(5,6)",
            "decimal(5)",
            "decimal(5,1,1)",
            "decimal(a,b)",
            "decimal(-1,0)",
        ] {
            let err = PrimitiveType::from_type_name(bad);
            assert!(
                matches!(err, Err(DeltaError::InvalidSchema { .. })),
                "{bad}: {err:?}"
            );
        }
        assert!(PrimitiveType::decimal(38, 38).is_ok());
        assert!(PrimitiveType::decimal(1, 0).is_ok());
    }

    #[test]
    fn rejects_case_insensitive_duplicates() {
        let s = r#"{"type":"struct","fields":[
            {"name":"a","type":"long","nullable":true,"metadata":{}},
            {"name":"A","type":"long","nullable":true,"metadata":{}}]}"#;
        let err = parse_schema(s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("duplicate field name 'A'"), "{err}");
    }

    #[test]
    fn containers_default_to_nullable_contents() -> Result<()> {
        let s = r#"{"type":"struct","fields":[
            {"name":"m","type":{"type":"map","keyType":"string","valueType":"long"},"nullable":true}]}"#;
        let schema = parse_schema(s)?;
        assert_eq!(
            schema.fields[0].data_type,
            DataType::map(PrimitiveType::String, PrimitiveType::Long, true)
        );
        Ok(())
    }

    #[test]
    fn display_names_nested_types() -> Result<()> {
        let ty = DataType::map(
            PrimitiveType::String,
            DataType::array(PrimitiveType::decimal(4, 1)?, true),
            true,
        );
        assert_eq!(ty.to_string(), "map<string, array<decimal(4,1)>>");
        Ok(())
    }
}
