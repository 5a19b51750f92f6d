//! [`ScanOptions`]: how DataFusion scans of a Delta table read, and how many partitions they
//! plan for.

use crate::api::DeltaScanExecutionOptions;
use crate::error::Result;
use crate::plan::{target_partitions, PartitionCaps};
use crate::schema::OutputTypes;

/// Whether a DataFusion scan offers its whole-file groups to DataFusion's file
/// repartitioning (needs the session option `repartition_file_scans`; files smaller in total
/// than `repartition_file_min_size` are left whole).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum IntraFileRepartitioning {
    /// Split files into byte ranges only when the scan has fewer whole-file groups than its
    /// target partitions (default).
    #[default]
    WhenBelowTarget,
    /// Always split the files into byte ranges of about `ceil(total bytes / target)` each.
    Always,
}

/// Options of the scans of one registered table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// How each scan schedules its reads.
    pub execution_options: DeltaScanExecutionOptions,
    /// Partitions to plan for: wins over everything else when set (0 is an error). `None`
    /// (default): `execution_options.target_partitions` when set, else the machine's caps
    /// (parallelism, file descriptors, memory) capped by the session's `target_partitions`.
    pub target_partitions: Option<usize>,
    /// When file groups are split into byte ranges.
    pub intra_file_repartitioning: IntraFileRepartitioning,
    /// The Arrow types strings and binaries are read as. `None` (default): what DataFusion
    /// reads Parquet as, that is views (`Utf8View`, `BinaryView`) unless the session given to
    /// [`register_table`](super::register_table) turns
    /// `datafusion.execution.parquet.schema_force_view_types` off (then `Utf8`, `Binary`).
    /// [`DeltaTableProvider::try_new`](super::DeltaTableProvider::try_new), which sees no
    /// session, takes views.
    pub output_types: Option<OutputTypes>,
}

impl ScanOptions {
    /// Checks every value.
    pub fn validate(&self) -> Result<()> {
        self.execution_options.validate()?;
        target_partitions(self.target_partitions, &PartitionCaps::default()).map(|_| ())
    }
}

/// The output types of a DataFusion scan: those of `options`, else views when the session
/// forces view types (`schema_force_view_types`, on by default in DataFusion), else `Utf8`
/// and `Binary`.
pub fn scan_output_types(options: &ScanOptions, force_view_types: bool) -> OutputTypes {
    options.output_types.unwrap_or(if force_view_types {
        OutputTypes::VIEWS
    } else {
        OutputTypes::PLAIN
    })
}

/// The partitions a DataFusion scan plans for: the explicit target (`options`), else the
/// caps of `machine` capped by the session's `session_target`.
pub fn scan_target_partitions(
    options: &ScanOptions,
    machine: PartitionCaps,
    session_target: usize,
) -> Result<usize> {
    let explicit = options
        .target_partitions
        .or(options.execution_options.target_partitions);
    let caps = PartitionCaps {
        engine_target: Some(session_target.max(1)),
        ..machine
    };
    target_partitions(explicit, &caps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(parallelism: usize) -> PartitionCaps {
        PartitionCaps {
            available_parallelism: Some(parallelism),
            ..PartitionCaps::default()
        }
    }

    #[test]
    fn output_types_follow_the_options_then_the_session() {
        let o = ScanOptions::default();
        assert_eq!(scan_output_types(&o, true), OutputTypes::VIEWS);
        assert_eq!(scan_output_types(&o, false), OutputTypes::PLAIN);
        let large = OutputTypes::new(
            crate::schema::StringType::LargeUtf8,
            crate::schema::BinaryType::Binary,
        );
        let explicit = ScanOptions {
            output_types: Some(large),
            ..ScanOptions::default()
        };
        assert_eq!(scan_output_types(&explicit, true), large);
    }

    #[test]
    fn the_session_target_caps_and_an_explicit_target_wins() {
        let o = ScanOptions::default();
        assert_eq!(scan_target_partitions(&o, machine(16), 4).ok(), Some(4));
        assert_eq!(scan_target_partitions(&o, machine(2), 4).ok(), Some(2));
        let tight = PartitionCaps {
            fd_soft_limit: Some(48),
            ..machine(16)
        };
        assert_eq!(scan_target_partitions(&o, tight, 8).ok(), Some(3));
        let explicit = ScanOptions {
            target_partitions: Some(7),
            ..ScanOptions::default()
        };
        assert_eq!(
            scan_target_partitions(&explicit, machine(2), 1).ok(),
            Some(7)
        );
        let from_execution = ScanOptions {
            execution_options: DeltaScanExecutionOptions {
                target_partitions: Some(5),
                ..DeltaScanExecutionOptions::default()
            },
            ..ScanOptions::default()
        };
        assert_eq!(
            scan_target_partitions(&from_execution, machine(2), 1).ok(),
            Some(5)
        );
        let zero = ScanOptions {
            target_partitions: Some(0),
            ..ScanOptions::default()
        };
        assert!(zero.validate().is_err());
        assert!(scan_target_partitions(&zero, machine(2), 1).is_err());
    }
}
