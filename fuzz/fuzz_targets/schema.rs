//! Fuzz target `schema`: see `delta_arrow_reader::fuzzing::schema`.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: delta_arrow_reader::fuzzing::init(),
    |data: &[u8]| delta_arrow_reader::fuzzing::schema(data));
