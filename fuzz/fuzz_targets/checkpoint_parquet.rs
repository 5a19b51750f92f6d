//! Fuzz target `checkpoint_parquet`: see `delta_arrow_reader::fuzzing::checkpoint_parquet`.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: delta_arrow_reader::fuzzing::init(),
    |data: &[u8]| delta_arrow_reader::fuzzing::checkpoint_parquet(data));
