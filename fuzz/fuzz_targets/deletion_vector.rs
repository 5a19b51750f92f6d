//! Fuzz target `deletion_vector`: see `delta_arrow_reader::fuzzing::deletion_vector`.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: delta_arrow_reader::fuzzing::init(),
    |data: &[u8]| delta_arrow_reader::fuzzing::deletion_vector(data));
