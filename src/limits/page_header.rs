//! The fields of a Parquet page header the page checks read ([`super::pages`]), read with the
//! bounded compact-protocol reader ([`super::thrift`]): its type and sizes, a dictionary
//! page's value count, and what a data page header (V1 or V2) says of its contents.

use super::page_contents::{DataPage, LevelLayout};
use super::thrift::{kind, Reader, ThriftError};

/// `PageType` values of the Parquet format.
pub(super) const DATA_PAGE: i32 = 0;
pub(super) const DICTIONARY_PAGE: i32 = 2;
pub(super) const DATA_PAGE_V2: i32 = 3;

/// The fields of a page header the check reads.
#[derive(Debug, Default)]
pub(super) struct PageHeader {
    /// `type`: 0 a data page, 2 a dictionary page, 3 a V2 data page.
    pub(super) page_type: Option<i32>,
    pub(super) uncompressed: Option<i32>,
    pub(super) compressed: Option<i32>,
    /// `num_values` of a dictionary page header.
    pub(super) dictionary_values: Option<i32>,
    /// What a data page header (V1 or V2) says of the page's contents.
    pub(super) data: Option<DataPage>,
    /// The field of the data page header struct last read: 5 (V1) or 8 (V2).
    pub(super) data_header_field: Option<i16>,
}

impl PageHeader {
    /// Whether the header is a data page's (V1 or V2) without the data page header struct of
    /// its type, which arrow-rs unwraps (a panic).
    pub(super) fn lacks_its_data_header(&self) -> bool {
        match self.page_type {
            Some(DATA_PAGE) => self.data_header_field != Some(5),
            Some(DATA_PAGE_V2) => self.data_header_field != Some(8),
            _ => false,
        }
    }
}

/// Reads the page header at the start of `bytes`: its fields and its length, or why it
/// cannot be read.
pub(super) fn read_header(bytes: &[u8]) -> std::result::Result<(PageHeader, usize), ThriftError> {
    let mut r = Reader::new(bytes);
    let mut header = PageHeader::default();
    let mut last = 0;
    while let Some((id, k)) = r.field(last)? {
        match (id, k) {
            (1, kind::I32) => header.page_type = Some(r.i32()?),
            (2, kind::I32) => header.uncompressed = Some(r.i32()?),
            (3, kind::I32) => header.compressed = Some(r.i32()?),
            (5, kind::STRUCT) => {
                header.data = data_page_v1(&mut r)?;
                header.data_header_field = Some(5);
            }
            (7, kind::STRUCT) => header.dictionary_values = dictionary_values(&mut r)?,
            (8, kind::STRUCT) => {
                header.data = data_page_v2(&mut r)?;
                header.data_header_field = Some(8);
            }
            _ => r.skip(k)?,
        }
        last = id;
    }
    Ok((header, r.position()))
}

/// The `num_values` of the `DictionaryPageHeader` struct starting at the reader.
fn dictionary_values(r: &mut Reader<'_>) -> std::result::Result<Option<i32>, ThriftError> {
    let mut values = None;
    let mut last = 0;
    while let Some((id, k)) = r.field(last)? {
        match (id, k) {
            (1, kind::I32) => values = Some(r.i32()?),
            _ => r.skip(k)?,
        }
        last = id;
    }
    Ok(values)
}

/// The fields of a `DataPageHeader` starting at the reader (`None` when one is missing).
fn data_page_v1(r: &mut Reader<'_>) -> std::result::Result<Option<DataPage>, ThriftError> {
    let (mut values, mut enc, mut def, mut rep) = (None, None, None, None);
    let mut last = 0;
    while let Some((id, k)) = r.field(last)? {
        match (id, k) {
            (1, kind::I32) => values = Some(r.i32()?),
            (2, kind::I32) => enc = Some(r.i32()?),
            (3, kind::I32) => def = Some(r.i32()?),
            (4, kind::I32) => rep = Some(r.i32()?),
            _ => r.skip(k)?,
        }
        last = id;
    }
    let (Some(num_values), Some(encoding), Some(definition), Some(repetition)) =
        (values, enc, def, rep)
    else {
        return Ok(None);
    };
    Ok(Some(DataPage {
        num_values,
        encoding,
        levels: LevelLayout::V1 {
            repetition,
            definition,
        },
    }))
}

/// The fields of a `DataPageHeaderV2` starting at the reader (`None` when one is missing;
/// `is_compressed` is true unless it says otherwise).
fn data_page_v2(r: &mut Reader<'_>) -> std::result::Result<Option<DataPage>, ThriftError> {
    let (mut values, mut rows, mut enc, mut def, mut rep) = (None, None, None, None, None);
    let mut compressed = true;
    let mut last = 0;
    while let Some((id, k)) = r.field(last)? {
        match (id, k) {
            (1, kind::I32) => values = Some(r.i32()?),
            (3, kind::I32) => rows = Some(r.i32()?),
            (4, kind::I32) => enc = Some(r.i32()?),
            (5, kind::I32) => def = Some(r.i32()?),
            (6, kind::I32) => rep = Some(r.i32()?),
            (7, kind::TRUE) => compressed = true,
            (7, kind::FALSE) => compressed = false,
            _ => r.skip(k)?,
        }
        last = id;
    }
    let (Some(num_values), Some(num_rows), Some(encoding), Some(def), Some(rep)) =
        (values, rows, enc, def, rep)
    else {
        return Ok(None);
    };
    Ok(Some(DataPage {
        num_values,
        encoding,
        levels: LevelLayout::V2 {
            repetition_bytes: rep,
            definition_bytes: def,
            values_compressed: compressed,
            num_rows,
        },
    }))
}
