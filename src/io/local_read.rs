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
    let len = range.end - range.start;
    let mut buf = Vec::new();
    buf.try_reserve_exact(usize::try_from(len).unwrap_or(usize::MAX))
        .map_err(|_| past_end(path, range, None))?;
    // The file is opened for this read alone, so seeking it is safe. `read_to_end` reads
    // into the reserved memory without zeroing it first.
    let read = f
        .seek(SeekFrom::Start(range.start))
        .and_then(|_| (&mut f).take(len).read_to_end(&mut buf));
    match read {
        Ok(n) if n as u64 == len => Ok(Bytes::from(buf)),
        Ok(_) => {
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
        // A file where a folder of the path should be (a table path naming a file): no
        // such file either.
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            Err(DeltaError::NotFound {
                path: path.to_string(),
                phase: phase_for(path),
            })
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn file_of(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
        std::io::Write::write_all(&mut f, bytes).unwrap_or_else(|e| panic!("{e}"));
        f
    }

    #[test]
    fn ranges_and_whole_files_read_exactly() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let f = file_of(&data);
        for r in [0..1, 0..10_000, 4_000..4_001, 9_999..10_000, 17..9_000] {
            let got = read_range(f.path(), "x.parquet", &r)
                .map(|b| b.to_vec())
                .ok();
            let want = data[r.start as usize..r.end as usize].to_vec();
            assert_eq!(got, Some(want), "{r:?}");
        }
        let whole = read_whole(f.path(), "x.parquet").map(|b| b.to_vec()).ok();
        assert_eq!(whole, Some(data));
    }

    #[test]
    fn short_and_absurd_ranges_are_io_errors_naming_the_object() {
        let f = file_of(&[7; 100]);
        for r in [95..105, 100..101, 200..300, 0..u64::MAX / 2] {
            match read_range(f.path(), "_delta_log/x.checkpoint.parquet", &r) {
                Err(DeltaError::Io { path, message, .. }) => {
                    assert_eq!(path, "_delta_log/x.checkpoint.parquet");
                    assert!(message.contains("beyond the end"), "{r:?}: {message}");
                }
                other => panic!("{r:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_missing_file_is_not_found_in_its_phase() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let missing = dir.path().join("nothing.json");
        let err = read_range(&missing, "_delta_log/00000000000000000001.json", &(0..4)).err();
        assert!(
            matches!(&err, Some(DeltaError::NotFound { phase, .. })
                if *phase == crate::error::Phase::Load),
            "{err:?}"
        );
        let err = read_whole(&missing, "part-0.parquet").err();
        assert!(
            matches!(&err, Some(DeltaError::NotFound { phase, .. })
                if *phase == crate::error::Phase::Read),
            "{err:?}"
        );
    }
}
