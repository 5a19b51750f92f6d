//! Fuzz target `commit_json`: see `delta_arrow_reader::fuzzing::commit_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: delta_arrow_reader::fuzzing::init(),
    |data: &[u8]| delta_arrow_reader::fuzzing::commit_json(data));
