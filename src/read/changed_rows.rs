//! The rows of a file a read skips for its deletion vector, loaded: the vector's own rows
//! ([`DeletionVectorDescriptor`] of a scan), or, for a change data feed, every row but
//! those whose deletion one commit changed ([`DeletionVectorChange`]: the file removed with
//! one vector and added again with another).
//!
//! The change is a set difference of the two vectors (`after - before` for rows the commit
//! deleted, `before - after` for rows it restored); what a read skips is its complement
//! within the file's rows, known once the footer is.
//!
//! The npm package reads no change feed: on wasm32 a task's change is ignored here (none is
//! ever planned there), which keeps the set arithmetic out of the browser module.

use super::deletion_vector::DeletionVector;
use super::file::{load_deletion_vector, ReadContext};
use crate::error::Result;
use crate::plan::FileTask;
#[cfg(not(target_arch = "wasm32"))]
use {
    crate::log::DeletionVectorDescriptor, crate::plan::DeletionVectorChange,
    roaring::RoaringTreemap,
};

/// The deleted rows of a task, loaded.
pub(crate) enum SkippedRows {
    /// The rows of the task's deletion vector.
    Deleted(DeletionVector),
    /// All rows but those a commit's deletion vector change names.
    #[cfg(not(target_arch = "wasm32"))]
    AllBut {
        newly_deleted: bool,
        before: DeletionVector,
        after: DeletionVector,
    },
}

impl SkippedRows {
    /// Loads what `task` skips; `None` when it skips no row.
    pub(crate) async fn load(ctx: &ReadContext, task: &FileTask) -> Option<Result<SkippedRows>> {
        if let Some(dv) = &task.deletion_vector {
            return Some(
                load_deletion_vector(ctx, dv)
                    .await
                    .map(SkippedRows::Deleted),
            );
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(change) = &task.deletion_vector_change {
            return Some(load_change(ctx, change).await);
        }
        None
    }

    /// The largest row index a loaded vector names (each must be a row of the file).
    pub(crate) fn max_row(&self) -> Option<u64> {
        match self {
            SkippedRows::Deleted(dv) => dv.max_row(),
            #[cfg(not(target_arch = "wasm32"))]
            SkippedRows::AllBut { before, after, .. } => before.max_row().max(after.max_row()),
        }
    }

    /// The rows skipped, of the file `path` of `file_rows` rows (at most
    /// [`crate::limits::MAX_CHANGED_FILE_ROWS`] for a change).
    pub(crate) fn into_deleted(self, path: &str, file_rows: u64) -> Result<DeletionVector> {
        #[cfg(target_arch = "wasm32")]
        let _ = (path, file_rows);
        match self {
            SkippedRows::Deleted(dv) => Ok(dv),
            #[cfg(not(target_arch = "wasm32"))]
            SkippedRows::AllBut {
                newly_deleted,
                before,
                after,
            } => {
                let max = crate::limits::MAX_CHANGED_FILE_ROWS;
                if file_rows > max {
                    return Err(crate::error::DeltaError::limit_exceeded(
                        "rows of a data file whose deletion vector changed",
                        file_rows,
                        max,
                        Some(path),
                        crate::error::Phase::Read,
                    ));
                }
                let (before, after) = (before.as_treemap(), after.as_treemap());
                let changed = if newly_deleted {
                    after - before
                } else {
                    before - after
                };
                let mut skipped = RoaringTreemap::new();
                skipped.insert_range(0..file_rows);
                Ok(DeletionVector::from(skipped - changed))
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
async fn load_change(ctx: &ReadContext, change: &DeletionVectorChange) -> Result<SkippedRows> {
    let (before, after) = futures::join!(
        load_optional(ctx, change.before.as_ref()),
        load_optional(ctx, change.after.as_ref())
    );
    Ok(SkippedRows::AllBut {
        newly_deleted: change.newly_deleted,
        before: before?,
        after: after?,
    })
}

#[cfg(not(target_arch = "wasm32"))]
async fn load_optional(
    ctx: &ReadContext,
    dv: Option<&DeletionVectorDescriptor>,
) -> Result<DeletionVector> {
    match dv {
        Some(dv) => load_deletion_vector(ctx, dv).await,
        None => Ok(DeletionVector::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dv(rows: &[u64]) -> DeletionVector {
        DeletionVector::from_rows(rows.iter().copied())
    }

    fn skipped(newly_deleted: bool, before: &[u64], after: &[u64], rows: u64) -> Vec<u64> {
        let s = SkippedRows::AllBut {
            newly_deleted,
            before: dv(before),
            after: dv(after),
        };
        let deleted = s
            .into_deleted("f.parquet", rows)
            .unwrap_or_else(|e| panic!("{e}"));
        deleted.iter().collect()
    }

    #[test]
    fn a_change_reads_only_the_rows_it_changed() {
        // Row 0 restored, row 1 deleted before and after, row 2 newly deleted.
        assert_eq!(skipped(true, &[0, 1], &[1, 2], 5), [0, 1, 3, 4]);
        assert_eq!(skipped(false, &[0, 1], &[1, 2], 5), [1, 2, 3, 4]);
        // No vector before: every row the new one deletes is a change.
        assert_eq!(skipped(true, &[], &[3], 4), [0, 1, 2]);
        assert_eq!(skipped(false, &[], &[3], 4), [0, 1, 2, 3]);
        let s = SkippedRows::AllBut {
            newly_deleted: true,
            before: dv(&[2]),
            after: dv(&[9]),
        };
        assert_eq!(s.max_row(), Some(9));
        let plain = SkippedRows::Deleted(dv(&[4])).into_deleted("f.parquet", 2);
        assert_eq!(plain.ok().and_then(|d| d.max_row()), Some(4));
        // A footer claiming more rows than a change is read over is refused, not allocated.
        let huge = SkippedRows::AllBut {
            newly_deleted: false,
            before: dv(&[1]),
            after: dv(&[]),
        };
        let e = huge.into_deleted("f.parquet", 1 << 40).err();
        assert_eq!(e.map(|e| e.code()), Some("limit_exceeded"));
    }
}
