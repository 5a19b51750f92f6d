//! Fuzz target `parquet_scan`: see `delta_arrow_reader::fuzzing::parquet_scan`.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: delta_arrow_reader::fuzzing::init(),
    |data: &[u8]| delta_arrow_reader::fuzzing::parquet_scan(data));
