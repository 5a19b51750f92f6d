//! Column mapping: logical column names to the physical names and field ids in data files.
//!
//! Under the `columnMapping` feature (`delta.columnMapping.mode` = `name` or `id`) every field
//! of the schema carries `delta.columnMapping.physicalName` (its name in Parquet files and in
//! `add.partitionValues`) and `delta.columnMapping.id` (its Parquet field id). In `name` mode
//! data files are read by physical name; in `id` mode by field id. This file owns the mode,
//! the per-field lookups and the physical schema (Delta and Arrow) built from the logical one.
//!
//! The mode applies only when the protocol supports column mapping (reader version 2, or
//! version 3 with the `columnMapping` reader feature); checking that is the caller's part.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use arrow_schema::{Field as ArrowField, Fields, Schema as ArrowSchema};
use serde_json::Value;

use super::arrow::{field_id_metadata, list_type, map_type, nested_field_id};
use super::arrow::{LIST_ELEMENT_NAME, MAP_KEY_NAME, MAP_VALUE_NAME};
use super::types::{ArrayType, DataType, MapType, StructField, StructType};
use crate::error::{DeltaError, Result};

/// Table configuration key of the column mapping mode.
pub const COLUMN_MAPPING_MODE_KEY: &str = "delta.columnMapping.mode";
/// Field metadata key of a field's physical name.
pub const COLUMN_MAPPING_PHYSICAL_NAME_KEY: &str = "delta.columnMapping.physicalName";
/// Field metadata key of a field's column mapping id (its Parquet field id).
pub const COLUMN_MAPPING_ID_KEY: &str = "delta.columnMapping.id";

/// How logical columns map to columns in data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ColumnMappingMode {
    /// No mapping: physical names are the logical names.
    #[default]
    None,
    /// Columns are matched by Parquet field id (`delta.columnMapping.id`).
    Id,
    /// Columns are matched by physical name (`delta.columnMapping.physicalName`).
    Name,
}

impl ColumnMappingMode {
    /// The mode set by `delta.columnMapping.mode` in a table's configuration
    /// (`metaData.configuration`); [`ColumnMappingMode::None`] when absent. An unknown value is
    /// an [`DeltaError::InvalidSchema`] error.
    pub fn from_configuration(configuration: &HashMap<String, String>) -> Result<Self> {
        configuration
            .get(COLUMN_MAPPING_MODE_KEY)
            .map_or(Ok(ColumnMappingMode::None), |mode| mode.parse())
    }

    /// The mode's name as written in the configuration (`none`, `id`, `name`).
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnMappingMode::None => "none",
            ColumnMappingMode::Id => "id",
            ColumnMappingMode::Name => "name",
        }
    }
}

impl FromStr for ColumnMappingMode {
    type Err = DeltaError;

    /// Parses `none`, `id` or `name`, ignoring ASCII case (as Delta Spark does).
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "none" => Ok(ColumnMappingMode::None),
            "id" => Ok(ColumnMappingMode::Id),
            "name" => Ok(ColumnMappingMode::Name),
            _ => Err(DeltaError::invalid_schema(format!(
                "unknown column mapping mode '{s}' in '{COLUMN_MAPPING_MODE_KEY}' \
                 (expected none, id or name)"
            ))),
        }
    }
}

impl fmt::Display for ColumnMappingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The physical name of `field`: its logical name in mode `none`, otherwise its
/// `delta.columnMapping.physicalName`, which must then be present.
pub fn physical_name(field: &StructField, mode: ColumnMappingMode) -> Result<&str> {
    match mode {
        ColumnMappingMode::None => Ok(&field.name),
        ColumnMappingMode::Id | ColumnMappingMode::Name => {
            match field.metadata.get(COLUMN_MAPPING_PHYSICAL_NAME_KEY) {
                Some(Value::String(name)) if !name.is_empty() => Ok(name),
                Some(other) => Err(DeltaError::invalid_schema(format!(
                    "field '{}' has an invalid '{COLUMN_MAPPING_PHYSICAL_NAME_KEY}': {other}",
                    field.name
                ))),
                None => Err(DeltaError::invalid_schema(format!(
                    "field '{}' has no '{COLUMN_MAPPING_PHYSICAL_NAME_KEY}', which column \
                     mapping mode '{mode}' requires",
                    field.name
                ))),
            }
        }
    }
}

/// The column mapping id (Parquet field id) of `field`: required in mode `id`, returned when
/// present in mode `name`, ignored in mode `none`. An id must be an integer from 0 to
/// 2^31 - 1.
pub fn field_id(field: &StructField, mode: ColumnMappingMode) -> Result<Option<i32>> {
    if mode == ColumnMappingMode::None {
        return Ok(None);
    }
    match field.metadata.get(COLUMN_MAPPING_ID_KEY) {
        None if mode == ColumnMappingMode::Id => Err(DeltaError::invalid_schema(format!(
            "field '{}' has no '{COLUMN_MAPPING_ID_KEY}', which column mapping mode 'id' \
             requires",
            field.name
        ))),
        None => Ok(None),
        Some(value) => value
            .as_i64()
            .and_then(|id| i32::try_from(id).ok())
            .filter(|id| *id >= 0)
            .map(Some)
            .ok_or_else(|| {
                DeltaError::invalid_schema(format!(
                    "field '{}' has an invalid '{COLUMN_MAPPING_ID_KEY}': {value}",
                    field.name
                ))
            }),
    }
}

/// Checks the column mapping metadata of every field of `schema`, at every depth (struct
/// fields, also inside array elements and map keys and values), as the protocol requires in
/// mode `name` and `id`: a non-empty string `physicalName` on each field, unique among its
/// siblings, and a valid `id` (required in mode `id`), unique in the schema. A field that
/// broke these rules would be looked for in data files under a name they do not have and read
/// as nulls. Walks the schema without recursion.
pub fn validate_column_mapping(schema: &StructType, mode: ColumnMappingMode) -> Result<()> {
    if mode == ColumnMappingMode::None {
        return Ok(());
    }
    let mut ids: HashMap<i32, &str> = HashMap::new();
    let mut structs: Vec<&StructType> = vec![schema];
    while let Some(fields) = structs.pop() {
        let mut names: HashMap<&str, &str> = HashMap::with_capacity(fields.fields.len());
        for field in &fields.fields {
            let physical = physical_name(field, mode)?;
            if let Some(other) = names.insert(physical, &field.name) {
                return Err(DeltaError::invalid_schema(format!(
                    "fields '{other}' and '{}' have the same '{COLUMN_MAPPING_PHYSICAL_NAME_KEY}' \
                     '{physical}'",
                    field.name
                )));
            }
            if let Some(id) = field_id(field, mode)? {
                if let Some(other) = ids.insert(id, &field.name) {
                    return Err(DeltaError::invalid_schema(format!(
                        "fields '{other}' and '{}' have the same '{COLUMN_MAPPING_ID_KEY}' {id}",
                        field.name
                    )));
                }
            }
            let mut types = vec![&field.data_type];
            while let Some(t) = types.pop() {
                match t {
                    DataType::Struct(s) => structs.push(s),
                    DataType::Array(a) => types.push(&a.element_type),
                    DataType::Map(m) => types.extend([&m.key_type, &m.value_type]),
                    DataType::Primitive(_) => {}
                }
            }
        }
    }
    Ok(())
}

impl StructType {
    /// This schema with every field, at every depth (struct fields, array elements, map keys
    /// and values), renamed to its physical name. Types, nullability and metadata are kept. In
    /// mode `none` the schema is returned unchanged.
    pub fn physical_schema(&self, mode: ColumnMappingMode) -> Result<StructType> {
        if mode == ColumnMappingMode::None {
            return Ok(self.clone());
        }
        self.fields
            .iter()
            .map(|field| physical_field(field, mode))
            .collect::<Result<Vec<_>>>()
            .map(StructType::new)
    }

    /// The Arrow schema of the data files: fields named by physical name, with types as in
    /// [`StructType::to_arrow`]. In mode `id`, each field's metadata holds only its Parquet
    /// field id under `PARQUET:field_id` (and `element`, `key` and `value` fields get theirs
    /// from `delta.columnMapping.nested.ids` where given); otherwise fields carry no metadata.
    pub fn physical_arrow_schema(&self, mode: ColumnMappingMode) -> Result<ArrowSchema> {
        Ok(ArrowSchema::new(physical_arrow_fields(self, mode)?))
    }

    /// The physical name of the top-level column `logical_name` (matched as in
    /// [`StructType::field`]): the key of that column in `add.partitionValues`.
    pub fn physical_partition_name(
        &self,
        mode: ColumnMappingMode,
        logical_name: &str,
    ) -> Result<&str> {
        let field = self.field(logical_name).ok_or_else(|| {
            DeltaError::invalid_schema(format!(
                "partition column '{logical_name}' is not in the table schema"
            ))
        })?;
        physical_name(field, mode)
    }
}

fn physical_field(field: &StructField, mode: ColumnMappingMode) -> Result<StructField> {
    Ok(StructField {
        name: physical_name(field, mode)?.to_string(),
        data_type: physical_type(&field.data_type, mode)?,
        nullable: field.nullable,
        metadata: field.metadata.clone(),
    })
}

fn physical_type(data_type: &DataType, mode: ColumnMappingMode) -> Result<DataType> {
    Ok(match data_type {
        DataType::Struct(s) => DataType::Struct(Box::new(s.physical_schema(mode)?)),
        DataType::Array(a) => DataType::Array(Box::new(ArrayType {
            element_type: physical_type(&a.element_type, mode)?,
            contains_null: a.contains_null,
        })),
        DataType::Map(m) => DataType::Map(Box::new(MapType {
            key_type: physical_type(&m.key_type, mode)?,
            value_type: physical_type(&m.value_type, mode)?,
            value_contains_null: m.value_contains_null,
        })),
        other => other.clone(),
    })
}

fn physical_arrow_fields(st: &StructType, mode: ColumnMappingMode) -> Result<Fields> {
    st.fields
        .iter()
        .map(|field| {
            let name = physical_name(field, mode)?;
            let data_type = physical_arrow_type(field, name, &field.data_type, mode)?;
            let id = match mode {
                ColumnMappingMode::Id => field_id(field, mode)?.map(i64::from),
                _ => None,
            };
            Ok(ArrowField::new(name, data_type, field.nullable)
                .with_metadata(field_id_metadata(id)))
        })
        .collect::<Result<Vec<_>>>()
        .map(Fields::from)
}

/// The physical Arrow type of `data_type`, at dot path `path` (rooted at the physical name of
/// `ancestor`, the nearest enclosing struct field).
fn physical_arrow_type(
    ancestor: &StructField,
    path: &str,
    data_type: &DataType,
    mode: ColumnMappingMode,
) -> Result<arrow_schema::DataType> {
    let nested_id = |path: &str| -> Result<Option<i64>> {
        match mode {
            ColumnMappingMode::Id => nested_field_id(ancestor, path),
            _ => Ok(None),
        }
    };
    Ok(match data_type {
        DataType::Struct(s) => arrow_schema::DataType::Struct(physical_arrow_fields(s, mode)?),
        DataType::Array(a) => {
            let element_path = format!("{path}.{LIST_ELEMENT_NAME}");
            let element = physical_arrow_type(ancestor, &element_path, &a.element_type, mode)?;
            list_type(element, a.contains_null, nested_id(&element_path)?)
        }
        DataType::Map(m) => {
            let key_path = format!("{path}.{MAP_KEY_NAME}");
            let value_path = format!("{path}.{MAP_VALUE_NAME}");
            let key = physical_arrow_type(ancestor, &key_path, &m.key_type, mode)?;
            let value = physical_arrow_type(ancestor, &value_path, &m.value_type, mode)?;
            map_type(
                key,
                value,
                m.value_contains_null,
                nested_id(&key_path)?,
                nested_id(&value_path)?,
            )
        }
        DataType::Primitive(p) => p.to_arrow(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::arrow::PARQUET_FIELD_ID_KEY;
    use crate::schema::types::{parse_schema, PrimitiveType};
    use arrow_schema::DataType as A;

    /// A column-mapped schema: `a: long`, `s: struct<b: string>`,
    /// `m: map<string, array<struct<c: int>>>` with nested ids.
    const MAPPED: &str = r#"{"type":"struct","fields":[
      {"name":"a","type":"long","nullable":true,"metadata":{
        "delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-a"}},
      {"name":"s","type":{"type":"struct","fields":[
        {"name":"b","type":"string","nullable":false,"metadata":{
          "delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-b"}}]},
       "nullable":true,"metadata":{
        "delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-s"}},
      {"name":"m","type":{"type":"map","keyType":"string","valueType":{
        "type":"array","elementType":{"type":"struct","fields":[
          {"name":"c","type":"integer","nullable":true,"metadata":{
            "delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-c"}}]},
        "containsNull":true},"valueContainsNull":true},
       "nullable":true,"metadata":{
        "delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-m",
        "delta.columnMapping.nested.ids":{"col-m.key":6,"col-m.value":7,"col-m.value.element":8}}}
    ]}"#;

    fn err_text<T: std::fmt::Debug>(r: Result<T>) -> String {
        match r {
            Ok(v) => format!("unexpected success: {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn id_of(field: &ArrowField) -> Option<&str> {
        field
            .metadata()
            .get(PARQUET_FIELD_ID_KEY)
            .map(String::as_str)
    }

    #[test]
    fn mode_from_configuration() -> Result<()> {
        let mut conf = HashMap::new();
        assert_eq!(
            ColumnMappingMode::from_configuration(&conf)?,
            ColumnMappingMode::None
        );
        for (text, mode) in [
            ("none", ColumnMappingMode::None),
            ("id", ColumnMappingMode::Id),
            ("name", ColumnMappingMode::Name),
            ("Name", ColumnMappingMode::Name),
        ] {
            conf.insert(COLUMN_MAPPING_MODE_KEY.to_string(), text.to_string());
            assert_eq!(ColumnMappingMode::from_configuration(&conf)?, mode);
        }
        conf.insert(COLUMN_MAPPING_MODE_KEY.to_string(), "path".to_string());
        let err = err_text(ColumnMappingMode::from_configuration(&conf));
        assert!(err.contains("'path'"), "{err}");
        assert_eq!(ColumnMappingMode::Id.to_string(), "id");
        Ok(())
    }

    #[test]
    fn field_lookups() -> Result<()> {
        let schema = parse_schema(MAPPED)?;
        let a = &schema.fields[0];
        assert_eq!(physical_name(a, ColumnMappingMode::None)?, "a");
        assert_eq!(physical_name(a, ColumnMappingMode::Name)?, "col-a");
        assert_eq!(physical_name(a, ColumnMappingMode::Id)?, "col-a");
        assert_eq!(field_id(a, ColumnMappingMode::None)?, None);
        assert_eq!(field_id(a, ColumnMappingMode::Name)?, Some(1));
        assert_eq!(field_id(a, ColumnMappingMode::Id)?, Some(1));

        let plain = StructField::new("plain", PrimitiveType::Long, true);
        assert_eq!(physical_name(&plain, ColumnMappingMode::None)?, "plain");
        let err = err_text(physical_name(&plain, ColumnMappingMode::Name));
        assert!(
            err.contains("'plain'") && err.contains("physicalName"),
            "{err}"
        );
        assert_eq!(field_id(&plain, ColumnMappingMode::Name)?, None);
        let err = err_text(field_id(&plain, ColumnMappingMode::Id));
        assert!(
            err.contains("'plain'") && err.contains("columnMapping.id"),
            "{err}"
        );

        let bad = plain.clone().with_metadata(COLUMN_MAPPING_ID_KEY, -1);
        assert!(field_id(&bad, ColumnMappingMode::Id).is_err());
        let bad = plain.with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, 3);
        assert!(physical_name(&bad, ColumnMappingMode::Name).is_err());
        Ok(())
    }

    #[test]
    fn physical_schema_renames_recursively() -> Result<()> {
        let schema = parse_schema(MAPPED)?;
        assert_eq!(schema.physical_schema(ColumnMappingMode::None)?, schema);
        let physical = schema.physical_schema(ColumnMappingMode::Name)?;
        assert_eq!(
            physical.field_names().collect::<Vec<_>>(),
            ["col-a", "col-s", "col-m"]
        );
        let DataType::Struct(s) = &physical.fields[1].data_type else {
            return Err(DeltaError::invalid_schema("s is not a struct"));
        };
        assert_eq!(s.fields[0].name, "col-b");
        assert!(!s.fields[0].nullable);
        let DataType::Map(m) = &physical.fields[2].data_type else {
            return Err(DeltaError::invalid_schema("m is not a map"));
        };
        let DataType::Array(a) = &m.value_type else {
            return Err(DeltaError::invalid_schema("m values are not arrays"));
        };
        let DataType::Struct(inner) = &a.element_type else {
            return Err(DeltaError::invalid_schema("elements are not structs"));
        };
        assert_eq!(inner.fields[0].name, "col-c");
        assert_eq!(physical.fields[0].metadata, schema.fields[0].metadata);
        Ok(())
    }

    #[test]
    fn physical_arrow_schema_in_id_mode() -> Result<()> {
        let schema = parse_schema(MAPPED)?;
        let arrow = schema.physical_arrow_schema(ColumnMappingMode::Id)?;
        let names: Vec<_> = arrow.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["col-a", "col-s", "col-m"]);
        assert_eq!(id_of(&arrow.fields()[0]), Some("1"));
        assert_eq!(arrow.fields()[0].data_type(), &A::Int64);
        let A::Struct(s) = arrow.fields()[1].data_type() else {
            return Err(DeltaError::invalid_schema("s is not a struct"));
        };
        assert_eq!((s[0].name().as_str(), id_of(&s[0])), ("col-b", Some("3")));

        let m = &arrow.fields()[2];
        assert_eq!(id_of(m), Some("4"));
        assert_eq!(m.metadata().len(), 1);
        let A::Map(entries, false) = m.data_type() else {
            return Err(DeltaError::invalid_schema("m is not a map"));
        };
        let A::Struct(kv) = entries.data_type() else {
            return Err(DeltaError::invalid_schema("entries are not a struct"));
        };
        assert_eq!(id_of(&kv[0]), Some("6"));
        assert_eq!(id_of(&kv[1]), Some("7"));
        let A::List(element) = kv[1].data_type() else {
            return Err(DeltaError::invalid_schema("values are not lists"));
        };
        assert_eq!(id_of(element), Some("8"));
        let A::Struct(inner) = element.data_type() else {
            return Err(DeltaError::invalid_schema("elements are not structs"));
        };
        assert_eq!(
            (inner[0].name().as_str(), id_of(&inner[0])),
            ("col-c", Some("5"))
        );
        Ok(())
    }

    #[test]
    fn physical_arrow_schema_in_name_and_none_modes() -> Result<()> {
        let schema = parse_schema(MAPPED)?;
        let by_name = schema.physical_arrow_schema(ColumnMappingMode::Name)?;
        assert_eq!(by_name.fields()[0].name(), "col-a");
        assert!(by_name.fields().iter().all(|f| f.metadata().is_empty()));
        let none = schema.physical_arrow_schema(ColumnMappingMode::None)?;
        assert_eq!(none.fields()[2].name(), "m");
        // Same types as the logical conversion, apart from metadata.
        let logical = schema.to_arrow()?;
        assert_eq!(
            none.fields()[0].data_type(),
            logical.fields()[0].data_type()
        );
        Ok(())
    }

    #[test]
    fn id_mode_needs_ids() {
        let schema = StructType::new([StructField::new("x", PrimitiveType::Long, true)
            .with_metadata(COLUMN_MAPPING_PHYSICAL_NAME_KEY, "col-x")]);
        assert!(schema
            .physical_arrow_schema(ColumnMappingMode::Name)
            .is_ok());
        let err = err_text(schema.physical_arrow_schema(ColumnMappingMode::Id));
        assert!(err.contains("'x'"), "{err}");
    }

    #[test]
    fn partition_names() -> Result<()> {
        let schema = parse_schema(MAPPED)?;
        assert_eq!(
            schema.physical_partition_name(ColumnMappingMode::Name, "a")?,
            "col-a"
        );
        assert_eq!(
            schema.physical_partition_name(ColumnMappingMode::None, "A")?,
            "a"
        );
        let err = err_text(schema.physical_partition_name(ColumnMappingMode::Name, "zz"));
        assert!(err.contains("'zz'"), "{err}");
        Ok(())
    }

    #[test]
    fn column_mapping_metadata_is_validated_at_every_depth() -> Result<()> {
        let schema = parse_schema(MAPPED)?;
        for mode in [ColumnMappingMode::Name, ColumnMappingMode::Id] {
            validate_column_mapping(&schema, mode)?;
        }
        // The deepest field (inside map value, array element, struct): each way of breaking it.
        let deep = r#""delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-c""#;
        let cases = [
            (r#""delta.columnMapping.id":5"#, "has no"),
            (
                r#""delta.columnMapping.id":5,"delta.columnMapping.physicalName":7"#,
                "invalid",
            ),
            (
                r#""delta.columnMapping.id":5,"delta.columnMapping.physicalName":"""#,
                "invalid",
            ),
            (
                r#""delta.columnMapping.id":"5","delta.columnMapping.physicalName":"col-c""#,
                "invalid",
            ),
            (
                r#""delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-c""#,
                "same",
            ),
        ];
        for (broken, want) in cases {
            let text = MAPPED.replace(deep, broken);
            assert_ne!(text, MAPPED);
            let schema = parse_schema(&text)?;
            let err = err_text(validate_column_mapping(&schema, ColumnMappingMode::Id));
            assert!(err.contains(want) && err.contains("'c'"), "{broken}: {err}");
        }
        // Two siblings with one physical name.
        let text = MAPPED.replace(r#".physicalName":"col-a""#, r#".physicalName":"col-m""#);
        assert_ne!(text, MAPPED);
        let err = err_text(validate_column_mapping(
            &parse_schema(&text)?,
            ColumnMappingMode::Name,
        ));
        assert!(err.contains("same") && err.contains("'col-m'"), "{err}");
        // Mode none reads logical names: nothing to check.
        let bare = parse_schema(
            r#"{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}"#,
        )?;
        validate_column_mapping(&bare, ColumnMappingMode::None)?;
        let err = err_text(validate_column_mapping(&bare, ColumnMappingMode::Name));
        assert!(err.contains("has no"), "{err}");
        Ok(())
    }
}
