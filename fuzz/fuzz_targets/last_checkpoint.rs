//! Fuzz target `last_checkpoint`: see `delta_arrow_reader::fuzzing::last_checkpoint`.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: delta_arrow_reader::fuzzing::init(),
    |data: &[u8]| delta_arrow_reader::fuzzing::last_checkpoint(data));
