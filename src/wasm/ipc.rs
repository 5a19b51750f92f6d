//! Record batches as Arrow IPC stream bytes, the format `apache-arrow`'s `tableFromIPC`
//! reads: one complete stream (schema, batch, end marker) per batch, or one stream for a
//! whole scan whose bytes are handed to JS piece by piece, so wasm memory never holds more
//! than one encoded batch.

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, Schema};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::JsCast;

use crate::error::{DeltaError, Phase, Result};

fn arrow_error(source: ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: Phase::Read,
        source,
    }
}

/// One batch as a complete IPC stream.
pub(crate) fn batch_to_stream(batch: &RecordBatch) -> Result<Uint8Array> {
    let mut writer = StreamWriter::try_new(Vec::new(), batch.schema_ref()).map_err(arrow_error)?;
    writer.write(batch).map_err(arrow_error)?;
    writer.finish().map_err(arrow_error)?;
    let bytes = writer.into_inner().map_err(arrow_error)?;
    Ok(Uint8Array::from(bytes.as_slice()))
}

/// One IPC stream written batch by batch; each piece is copied out to a JS array at once.
pub(crate) struct StreamPieces {
    writer: StreamWriter<Vec<u8>>,
    pieces: Array,
    len: u32,
}

impl StreamPieces {
    /// Starts a stream of `schema`.
    pub(crate) fn new(schema: &Schema) -> Result<Self> {
        let writer = StreamWriter::try_new(Vec::new(), schema).map_err(arrow_error)?;
        let mut pieces = StreamPieces {
            writer,
            pieces: Array::new(),
            len: 0,
        };
        pieces.drain()?;
        Ok(pieces)
    }

    /// Appends a batch.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer.write(batch).map_err(arrow_error)?;
        self.drain()
    }

    /// Ends the stream; all of it as one array.
    pub(crate) fn finish(mut self) -> Result<Uint8Array> {
        self.writer.finish().map_err(arrow_error)?;
        self.drain()?;
        let out = Uint8Array::new_with_length(self.len);
        let mut at = 0u32;
        for piece in self.pieces.iter() {
            let piece: Uint8Array = piece.unchecked_into();
            out.set(&piece, at);
            at += piece.length();
        }
        Ok(out)
    }

    fn drain(&mut self) -> Result<()> {
        let buffer = self.writer.get_mut();
        if buffer.is_empty() {
            return Ok(());
        }
        let len = u32::try_from(buffer.len())
            .ok()
            .and_then(|n| self.len.checked_add(n))
            .ok_or_else(|| DeltaError::Unsupported {
                what: "a result of 4 GiB or more in one IPC stream; iterate the scan instead"
                    .into(),
            })?;
        self.pieces.push(&Uint8Array::from(buffer.as_slice()));
        self.len = len;
        buffer.clear();
        Ok(())
    }
}
