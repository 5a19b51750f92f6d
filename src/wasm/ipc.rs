//! Record batches as Arrow IPC stream bytes, the format `apache-arrow`'s `tableFromIPC`
//! reads.
//!
//! [`IpcStream`] writes one stream (the schema once, then record batches, then the end
//! marker) and hands its bytes to JS piece by piece as they are written, so wasm memory never
//! holds more than one encoded batch: a scan's async iterator yields those pieces, which
//! together are one continuous stream. [`batch_to_stream`] makes one complete stream of a
//! single batch, for those who want each batch on its own.

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

/// One batch as a complete IPC stream (schema, batch, end marker).
pub(crate) fn batch_to_stream(batch: &RecordBatch) -> Result<Uint8Array> {
    let mut stream = IpcStream::new(batch.schema_ref())?;
    stream.write(batch)?;
    stream.finish()?;
    Ok(stream.take())
}

/// One IPC stream, written batch by batch; [`IpcStream::take`] hands over the bytes written
/// since the last take.
pub(crate) struct IpcStream {
    writer: StreamWriter<Vec<u8>>,
}

impl IpcStream {
    /// Starts a stream of `schema`: its first piece holds the schema message.
    pub(crate) fn new(schema: &Schema) -> Result<Self> {
        let writer = StreamWriter::try_new(Vec::new(), schema).map_err(arrow_error)?;
        Ok(IpcStream { writer })
    }

    /// Appends a batch.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer.write(batch).map_err(arrow_error)
    }

    /// Appends the end-of-stream marker; nothing may be written after it.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.writer.finish().map_err(arrow_error)
    }

    /// The bytes written since the last call, copied out to JS (empty when there are none).
    pub(crate) fn take(&mut self) -> Uint8Array {
        let buffer = self.writer.get_mut();
        let piece = Uint8Array::from(buffer.as_slice());
        buffer.clear();
        piece
    }
}

/// Pieces of one stream gathered in JS memory, then joined into one array.
pub(crate) struct Pieces {
    pieces: Array,
    len: u32,
}

impl Pieces {
    pub(crate) fn new() -> Self {
        Pieces {
            pieces: Array::new(),
            len: 0,
        }
    }

    /// Adds a piece; the whole must stay under 4 GiB (a JS typed array's limit here).
    pub(crate) fn push(&mut self, piece: Uint8Array) -> Result<()> {
        self.len = self
            .len
            .checked_add(piece.length())
            .ok_or_else(|| DeltaError::Unsupported {
                what: "a result of 4 GiB or more in one IPC stream; iterate the scan instead"
                    .into(),
            })?;
        self.pieces.push(&piece);
        Ok(())
    }

    /// All pieces as one array.
    pub(crate) fn join(self) -> Uint8Array {
        let out = Uint8Array::new_with_length(self.len);
        let mut at = 0u32;
        for piece in self.pieces.iter() {
            let piece: Uint8Array = piece.unchecked_into();
            out.set(&piece, at);
            at += piece.length();
        }
        out
    }
}
