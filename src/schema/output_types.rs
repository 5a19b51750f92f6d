//! How strings and binaries come out of a scan: [`OutputTypes`].
//!
//! The logical Arrow schema ([`StructType::to_arrow`](super::StructType::to_arrow)) holds
//! Delta `string` as `Utf8` and `binary` as `Binary`, like `delta_kernel`. A scan can ask for
//! another of Arrow's encodings instead: 64-bit offsets (`LargeUtf8`, `LargeBinary`) or views
//! (`Utf8View`, `BinaryView`: 16-byte views into the decoded pages, which the Parquet reader
//! builds without copying each value into one offset buffer). [`OutputTypes::apply`] rewrites
//! a logical type for them, everywhere a string or binary can appear: top level, struct
//! fields, list elements, map keys and values, and the `metadata`/`value` of a `variant`;
//! map keys are never views ([`OutputTypes::keys`]).
//!
//! [`OutputTypes::file_hint`] does the same for a data file's own Arrow type (which may be
//! dictionary encoded, large or a view already): what the Parquet reader is asked to decode
//! BYTE_ARRAY columns into, so the wanted encoding comes straight out of the decoder.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, Schema};

use crate::error::DeltaError;

/// The Arrow type of Delta `string` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum StringType {
    /// `Utf8`: 32-bit offsets into one value buffer (what `delta_kernel` returns) (default).
    #[default]
    Utf8,
    /// `LargeUtf8`: 64-bit offsets.
    LargeUtf8,
    /// `Utf8View`: views into shared buffers (what DataFusion reads Parquet strings as).
    Utf8View,
}

/// The Arrow type of Delta `binary` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum BinaryType {
    /// `Binary`: 32-bit offsets into one value buffer (what `delta_kernel` returns) (default).
    #[default]
    Binary,
    /// `LargeBinary`: 64-bit offsets.
    LargeBinary,
    /// `BinaryView`: views into shared buffers.
    BinaryView,
}

/// The Arrow types strings and binaries are output as. `Default` is the logical schema's
/// (`Utf8`, `Binary`); a scan's default is [`OutputTypes::scan_default`] (views).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct OutputTypes {
    /// The type of `string` values.
    pub strings: StringType,
    /// The type of `binary` values.
    pub binaries: BinaryType,
}

impl StringType {
    /// The Arrow type.
    pub fn data_type(self) -> DataType {
        match self {
            StringType::Utf8 => DataType::Utf8,
            StringType::LargeUtf8 => DataType::LargeUtf8,
            StringType::Utf8View => DataType::Utf8View,
        }
    }
}

impl BinaryType {
    /// The Arrow type.
    pub fn data_type(self) -> DataType {
        match self {
            BinaryType::Binary => DataType::Binary,
            BinaryType::LargeBinary => DataType::LargeBinary,
            BinaryType::BinaryView => DataType::BinaryView,
        }
    }
}

impl OutputTypes {
    /// `Utf8` and `Binary`: the logical schema's types, as `delta_kernel` returns them.
    pub const PLAIN: OutputTypes = OutputTypes {
        strings: StringType::Utf8,
        binaries: BinaryType::Binary,
    };
    /// `Utf8View` and `BinaryView`.
    pub const VIEWS: OutputTypes = OutputTypes {
        strings: StringType::Utf8View,
        binaries: BinaryType::BinaryView,
    };

    /// What a Rust scan outputs unless told otherwise
    /// ([`DeltaScanBuilder::with_output_types`](crate::api::DeltaScanBuilder::with_output_types)):
    /// [`VIEWS`](Self::VIEWS).
    ///
    /// Chosen by measurement (`examples/bench_output_types.rs`, 4M rows with five string
    /// columns, full scan): `Utf8` took 0.75 s against 0.50–0.54 s for `Utf8View`, at the
    /// same peak memory, because the Parquet reader builds views over the decoded pages
    /// instead of copying every value (and every dictionary lookup) into one offset buffer:
    /// with `Utf8`, `memmove` and `extend_from_dictionary` were a third of the profile.
    /// DataFusion reads Parquet strings as views too. A consumer that needs offsets (an
    /// older Arrow library, a kernel without view support) asks for
    /// [`PLAIN`](Self::PLAIN). The JavaScript package defaults to `PLAIN`, which every
    /// `apache-arrow` release reads.
    pub const fn scan_default() -> Self {
        OutputTypes::VIEWS
    }

    /// Strings as `strings`, binaries as `binaries`.
    pub fn new(strings: StringType, binaries: BinaryType) -> Self {
        OutputTypes { strings, binaries }
    }

    /// Whether these are the logical schema's own types (nothing to rewrite).
    pub fn is_plain(&self) -> bool {
        *self == OutputTypes::PLAIN
    }

    /// A logical Arrow type (as the Delta schema converts) with its `Utf8` and `Binary`
    /// leaves, at any depth, replaced by these types (map keys never as views, see
    /// [`keys`](Self::keys)).
    pub fn apply(&self, data_type: &DataType) -> DataType {
        self.rewrite(data_type, false)
    }

    /// [`apply`](Self::apply) to a field's type; name, nullability and metadata stay.
    pub fn apply_field(&self, field: &Field) -> Field {
        field.clone().with_data_type(self.apply(field.data_type()))
    }

    /// [`apply`](Self::apply) to every field of a schema.
    pub fn apply_schema(&self, schema: &Schema) -> Schema {
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .map(|f| self.apply_field(f))
            .collect();
        Schema::new_with_metadata(fields, schema.metadata().clone())
    }

    /// A data file's Arrow type (as the Parquet reader infers it) with every string encoding
    /// (plain, large, view, or a dictionary of one) replaced by the wanted string type and
    /// every binary encoding by the wanted binary type: the schema hint under which the
    /// Parquet reader decodes BYTE_ARRAY columns straight into the output types.
    pub fn file_hint(&self, data_type: &DataType) -> DataType {
        self.rewrite(data_type, true)
    }

    /// The types of map keys: these, but `Utf8` and `Binary` for views. Engines find a map
    /// entry by comparing its key with a literal of the plain type, and DataFusion's
    /// `map['k']` refuses a `Utf8View` key ("Invalid comparison operation: Utf8 ==
    /// Utf8View"), as it never meets one in Parquet files it reads itself (it reads only
    /// top-level strings as views).
    pub fn keys(&self) -> OutputTypes {
        let strings = match self.strings {
            StringType::Utf8View => StringType::Utf8,
            other => other,
        };
        let binaries = match self.binaries {
            BinaryType::BinaryView => BinaryType::Binary,
            other => other,
        };
        OutputTypes { strings, binaries }
    }

    /// `data_type` with its string and binary leaves replaced, through structs, lists and
    /// maps: the logical `Utf8`/`Binary` ones, or (`file`) any encoding of them.
    fn rewrite(&self, data_type: &DataType, file: bool) -> DataType {
        let retyped = |f: &FieldRef, types: &OutputTypes| -> FieldRef {
            Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(types.rewrite(f.data_type(), file)),
            )
        };
        let field = |f: &FieldRef| retyped(f, self);
        match data_type {
            DataType::Utf8 => return self.strings.data_type(),
            DataType::Binary => return self.binaries.data_type(),
            t if file && is_string(t) => return self.strings.data_type(),
            t if file && is_binary(t) => return self.binaries.data_type(),
            _ => {}
        }
        match data_type {
            DataType::Struct(fields) => {
                DataType::Struct(fields.iter().map(field).collect::<Fields>())
            }
            DataType::List(item) => DataType::List(field(item)),
            DataType::LargeList(item) => DataType::LargeList(field(item)),
            DataType::ListView(item) => DataType::ListView(field(item)),
            DataType::LargeListView(item) => DataType::LargeListView(field(item)),
            DataType::FixedSizeList(item, n) => DataType::FixedSizeList(field(item), *n),
            DataType::Map(entries, sorted) => {
                let DataType::Struct(pair) = entries.data_type() else {
                    return DataType::Map(field(entries), *sorted);
                };
                let keys = self.keys();
                let pair: Fields = pair
                    .iter()
                    .enumerate()
                    .map(|(i, f)| if i == 0 { retyped(f, &keys) } else { field(f) })
                    .collect();
                let entries = entries
                    .as_ref()
                    .clone()
                    .with_data_type(DataType::Struct(pair));
                DataType::Map(Arc::new(entries), *sorted)
            }
            other => other.clone(),
        }
    }
}

/// Whether `data_type` holds strings: `Utf8`, `LargeUtf8`, `Utf8View`, or a dictionary of one.
pub(crate) fn is_string(data_type: &DataType) -> bool {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, value) => is_string(value),
        _ => false,
    }
}

/// Whether `data_type` holds binaries: `Binary`, `LargeBinary`, `BinaryView`, or a dictionary
/// of one.
pub(crate) fn is_binary(data_type: &DataType) -> bool {
    match data_type {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => true,
        DataType::Dictionary(_, value) => is_binary(value),
        _ => false,
    }
}

/// Whether `a` and `b` are plain, large or view encodings (not dictionaries) of the same
/// kind of values: both strings or both binaries.
pub(crate) fn same_values(a: &DataType, b: &DataType) -> bool {
    use DataType::*;
    let kind = |t: &DataType| match t {
        Utf8 | LargeUtf8 | Utf8View => Some(true),
        Binary | LargeBinary | BinaryView => Some(false),
        _ => None,
    };
    kind(a).is_some() && kind(a) == kind(b)
}

impl fmt::Display for StringType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.data_type(), f)
    }
}

impl fmt::Display for BinaryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.data_type(), f)
    }
}

/// The name without `_`, `-` and case: `utf8_view`, `Utf8View` and `utf8view` are one name.
fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn unknown(kind: &str, text: &str, known: &str) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: format!("unknown {kind} type '{text}'; use one of {known}"),
    }
}

impl FromStr for StringType {
    type Err = DeltaError;

    /// `utf8`, `large_utf8` or `utf8_view` (case, `_` and `-` ignored; `view` and `large`
    /// too).
    fn from_str(text: &str) -> Result<Self, DeltaError> {
        match squash(text).as_str() {
            "utf8" | "string" => Ok(StringType::Utf8),
            "largeutf8" | "large" | "largestring" => Ok(StringType::LargeUtf8),
            "utf8view" | "view" | "stringview" => Ok(StringType::Utf8View),
            _ => Err(unknown("string", text, "Utf8, LargeUtf8, Utf8View")),
        }
    }
}

impl FromStr for BinaryType {
    type Err = DeltaError;

    /// `binary`, `large_binary` or `binary_view` (case, `_` and `-` ignored; `view` and
    /// `large` too).
    fn from_str(text: &str) -> Result<Self, DeltaError> {
        match squash(text).as_str() {
            "binary" => Ok(BinaryType::Binary),
            "largebinary" | "large" => Ok(BinaryType::LargeBinary),
            "binaryview" | "view" => Ok(BinaryType::BinaryView),
            _ => Err(unknown("binary", text, "Binary, LargeBinary, BinaryView")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::types::parse_schema;

    const NESTED: &str = r#"{"type":"struct","fields":[
        {"name":"s","type":"string","nullable":true,"metadata":{"comment":"kept"}},
        {"name":"b","type":"binary","nullable":false,"metadata":{}},
        {"name":"n","type":"long","nullable":true,"metadata":{}},
        {"name":"st","type":{"type":"struct","fields":[
            {"name":"inner","type":"string","nullable":true,"metadata":{}},
            {"name":"x","type":"integer","nullable":true,"metadata":{}}]},
         "nullable":true,"metadata":{}},
        {"name":"l","type":{"type":"array","elementType":"binary","containsNull":true},
         "nullable":true,"metadata":{}},
        {"name":"m","type":{"type":"map","keyType":"string",
            "valueType":{"type":"array","elementType":"string","containsNull":false},
            "valueContainsNull":true},"nullable":true,"metadata":{}},
        {"name":"v","type":"variant","nullable":true,"metadata":{}}]}"#;

    /// Every leaf type of `t`, depth first.
    fn leaves(t: &DataType, out: &mut Vec<DataType>) {
        match t {
            DataType::Struct(fields) => fields.iter().for_each(|f| leaves(f.data_type(), out)),
            DataType::List(item) => leaves(item.data_type(), out),
            DataType::Map(entries, _) => leaves(entries.data_type(), out),
            other => out.push(other.clone()),
        }
    }

    #[test]
    fn views_replace_every_string_and_binary_leaf() -> crate::Result<()> {
        let logical = parse_schema(NESTED)?.to_arrow()?;
        let out = OutputTypes::VIEWS.apply_schema(&logical);
        let mut got = Vec::new();
        for f in out.fields() {
            leaves(f.data_type(), &mut got);
        }
        use DataType::*;
        assert_eq!(
            got,
            [
                Utf8View, BinaryView, Int64, Utf8View, Int32, BinaryView, Utf8, Utf8View,
                BinaryView, BinaryView
            ]
        );
        // Names, nullability and metadata are those of the logical schema.
        for (a, b) in logical.fields().iter().zip(out.fields().iter()) {
            assert_eq!(
                (a.name(), a.is_nullable(), a.metadata()),
                (b.name(), b.is_nullable(), b.metadata())
            );
        }
        let DataType::Map(entries, sorted) = out.field(5).data_type() else {
            panic!("m is not a map");
        };
        assert!(!sorted);
        assert_eq!(entries.name(), "key_value");
        let DataType::List(item) = out.field(4).data_type() else {
            panic!("l is not a list");
        };
        assert_eq!(
            (item.name().as_str(), item.is_nullable()),
            ("element", true)
        );
        Ok(())
    }

    #[test]
    fn large_types_and_plain_is_the_identity() -> crate::Result<()> {
        let logical = parse_schema(NESTED)?.to_arrow()?;
        assert_eq!(OutputTypes::PLAIN.apply_schema(&logical), logical);
        assert!(OutputTypes::default().is_plain());
        let large = OutputTypes::new(StringType::LargeUtf8, BinaryType::LargeBinary);
        let out = large.apply_schema(&logical);
        let mut got = Vec::new();
        for f in out.fields() {
            leaves(f.data_type(), &mut got);
        }
        assert!(got.contains(&DataType::LargeUtf8) && got.contains(&DataType::LargeBinary));
        assert!(!got.iter().any(|t| matches!(
            t,
            DataType::Utf8 | DataType::Binary | DataType::Utf8View | DataType::BinaryView
        )));
        // Strings and binaries can be chosen apart.
        let mixed = OutputTypes::new(StringType::Utf8View, BinaryType::Binary);
        assert_eq!(mixed.apply(&DataType::Utf8), DataType::Utf8View);
        assert_eq!(mixed.apply(&DataType::Binary), DataType::Binary);
        Ok(())
    }

    #[test]
    fn file_hints_cover_every_encoding_and_leave_other_types() {
        let views = OutputTypes::VIEWS;
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        for t in [
            DataType::Utf8,
            DataType::LargeUtf8,
            DataType::Utf8View,
            dict,
        ] {
            assert_eq!(views.file_hint(&t), DataType::Utf8View, "{t}");
        }
        for t in [
            DataType::Binary,
            DataType::LargeBinary,
            DataType::BinaryView,
        ] {
            assert_eq!(views.file_hint(&t), DataType::BinaryView, "{t}");
            assert_eq!(OutputTypes::PLAIN.file_hint(&t), DataType::Binary, "{t}");
        }
        for t in [
            DataType::FixedSizeBinary(16),
            DataType::Int64,
            DataType::Null,
        ] {
            assert_eq!(views.file_hint(&t), t, "{t}");
        }
        // Through a large list of structs, as a file's embedded Arrow schema may say.
        let nested = DataType::LargeList(Arc::new(Field::new(
            "item",
            DataType::Struct(Fields::from(vec![Field::new(
                "k",
                DataType::LargeUtf8,
                true,
            )])),
            true,
        )));
        let want = DataType::LargeList(Arc::new(Field::new(
            "item",
            DataType::Struct(Fields::from(vec![Field::new(
                "k",
                DataType::Utf8View,
                true,
            )])),
            true,
        )));
        assert_eq!(views.file_hint(&nested), want);
        // Logical rewriting touches only the logical types.
        assert_eq!(views.apply(&DataType::LargeUtf8), DataType::LargeUtf8);
    }

    #[test]
    fn names_parse_and_print() {
        for (text, want) in [
            ("utf8", StringType::Utf8),
            ("Utf8View", StringType::Utf8View),
            ("utf8_view", StringType::Utf8View),
            ("view", StringType::Utf8View),
            ("large-utf8", StringType::LargeUtf8),
        ] {
            assert_eq!(text.parse::<StringType>().ok(), Some(want), "{text}");
        }
        for (text, want) in [
            ("binary", BinaryType::Binary),
            ("BinaryView", BinaryType::BinaryView),
            ("large_binary", BinaryType::LargeBinary),
        ] {
            assert_eq!(text.parse::<BinaryType>().ok(), Some(want), "{text}");
        }
        assert!(matches!(
            "utf16".parse::<StringType>(),
            Err(DeltaError::InvalidArgument { .. })
        ));
        assert!("text".parse::<BinaryType>().is_err());
        assert_eq!(StringType::Utf8View.to_string(), "Utf8View");
        assert_eq!(BinaryType::LargeBinary.to_string(), "LargeBinary");
        assert!(same_values(&DataType::Utf8View, &DataType::LargeUtf8));
        assert!(!same_values(&DataType::Utf8, &DataType::Binary));
        let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
        assert!(!same_values(&dict, &DataType::Utf8));
    }
}
