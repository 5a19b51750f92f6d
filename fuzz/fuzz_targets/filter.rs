//! Fuzz target `filter`: see `delta_arrow_reader::fuzzing::filter`.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: delta_arrow_reader::fuzzing::init(),
    |data: &[u8]| delta_arrow_reader::fuzzing::filter(data));
