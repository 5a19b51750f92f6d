//! Reads of local files on the calling task's thread (native only).
//!
//! `object_store`'s local store hands every read to Tokio's blocking pool. For a scan that
//! decodes on every core, that adds a thread per read in flight: on a 2-core machine the
//! pool's threads woke for every row group, preempted the decoding workers (6,800 context
//! switches in a 1-second scan, against about 130 for arrow-rs's synchronous reader) and
//! cost them their caches, so the same Parquet decoding took about 40% more CPU. A read of
//! a file in the page cache is a copy, shorter than the hand-off, so [`ObjectStoreRange`]
//! reads local files here, where the task that asked for the bytes runs: the same pattern
//! as arrow-rs's synchronous reader, one thread reading and then decoding.
//!
//! [`ObjectStoreRange`]: super::ObjectStoreRange

use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use bytes::Bytes;

use super::{past_end, phase_for};
use crate::error::{DeltaError, Result};

/// Bytes `range` of the local file `file`, named `path` in errors.
pub(crate) fn read_range(file: &Path, path: &str, range: &Range<u64>) -> Result<Bytes> {
    let mut f = open(file, path)?;
    let len = usize::try_from(range.end - range.start).map_err(|_| past_end(path, range, None))?;
    let mut buf = vec![0u8; len];
    // The file is opened for this read alone, so seeking it is safe.
    let read = f
        .seek(SeekFrom::Start(range.start))
        .and_then(|_| f.read_exact(&mut buf));
    match read {
        Ok(()) => Ok(Bytes::from(buf)),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
            let size = f.metadata().ok().map(|m| m.len());
            Err(past_end(path, range, size))
        }
        Err(e) => Err(io_error(path, &e)),
    }
}

/// The whole local file `file`, named `path` in errors.
pub(crate) fn read_whole(file: &Path, path: &str) -> Result<Bytes> {
    let mut f = open(file, path)?;
    let mut buf = Vec::new();
    if let Ok(meta) = f.metadata() {
        buf.reserve_exact(usize::try_from(meta.len()).unwrap_or(0));
    }
    f.read_to_end(&mut buf).map_err(|e| io_error(path, &e))?;
    Ok(Bytes::from(buf))
}

fn open(file: &Path, path: &str) -> Result<File> {
    match File::open(file) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(DeltaError::NotFound {
            path: path.to_string(),
            phase: phase_for(path),
        }),
        Err(e) => Err(io_error(path, &e)),
    }
}

fn io_error(path: &str, e: &std::io::Error) -> DeltaError {
    DeltaError::Io {
        path: path.to_string(),
        message: e.to_string(),
        phase: phase_for(path),
        transient: false,
    }
}
