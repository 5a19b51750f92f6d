//! The native integration tests, linked into one test binary (`cargo test --test native`):
//! one link of the library, DataFusion and delta_kernel instead of one per file. Each module
//! is one subject; `common` and `rows` are shared helpers.
//!
//! The corpus tests read `../shared/corpus` beside the project and fail, naming the path,
//! when it is missing (see [`common::corpus_dir`]). `DAR_TEST_CORPUS=DIR` runs the
//! tests that go over every table (`corpus_load`, `conformance`, `kernel_parity`,
//! `kernel_rows`, `checkpoints::every_checkpoint_loads_with_the_adds_it_holds`,
//! `distributed_codec::every_readable_corpus_table_round_trips`) over another folder laid out
//! the same way (`tables/NAME/`, `INVENTORY.csv` with at least a `name` column, optionally
//! `expected/NAME/`); the tests that name corpus tables fail there. Tests run in parallel
//! threads of one process: none may change the environment or the current directory.
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod rows;

mod changes;
#[cfg(feature = "kernel")]
mod changes_kernel;
mod checkpoint_reads;
mod checkpoints;
mod cli;
#[cfg(feature = "cloud")]
mod cloud_emulators;
mod conformance;
mod corpus_load;
#[cfg(feature = "datafusion")]
mod datafusion_sql;
mod deletion_vectors;
mod deletion_vectors_corpus;
#[cfg(feature = "distributed")]
mod distributed_ballista;
#[cfg(feature = "distributed")]
mod distributed_codec;
#[cfg(feature = "distributed")]
mod distributed_workers;
#[cfg(feature = "serve")]
mod fault_matrix;
mod few_files;
mod head_reads;
mod history;
mod hostile_input;
mod hostile_limits;
#[cfg(feature = "serve")]
mod hostile_paths;
#[cfg(feature = "cloud")]
mod hostile_secrets;
#[cfg(feature = "serve")]
mod http_answers;
mod http_probing;
#[cfg(feature = "kernel")]
mod kernel_parity;
#[cfg(feature = "kernel")]
mod kernel_rows;
#[cfg(feature = "serve")]
mod load_concurrent;
#[cfg(feature = "kernel")]
mod page_pruning;
mod parquet_backends;
#[cfg(feature = "serve")]
mod range_read_conformance;
#[cfg(feature = "serve")]
#[path = "../shared/range_read_contract.rs"]
mod range_read_contract;
mod ranged_tasks;
mod read_ahead_gaps;
mod s3_moto;
mod scan_filter;
mod scan_metadata;
mod scheduling;
mod snapshot_loader;
mod time_travel;
