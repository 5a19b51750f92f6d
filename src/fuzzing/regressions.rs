//! Every input the fuzzers found a fault with, replayed through its target: the files in
//! `fuzz/regressions/TARGET/` (added as each finding is fixed; `scripts/fuzz` also seeds the
//! fuzzers with them). A replay that panics fails here, naming the file.

use std::path::Path;

#[test]
fn every_saved_finding_replays_without_a_fault() {
    super::init();
    replay_all();
}

/// As in a build that aborts on panic (wasm32): no decoder panic is contained, so each finding
/// must be refused by a check before a decoder sees it.
#[test]
fn every_saved_finding_is_refused_before_a_decoder_where_panics_abort() {
    crate::limits::behave_as_aborting(true);
    replay_all();
    crate::limits::behave_as_aborting(false);
}

/// Replays every saved finding through its target, on this thread.
fn replay_all() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    for (name, target) in super::TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(name)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            let input = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            eprintln!("replaying {}", path.display());
            target(&input);
            replayed += 1;
        }
    }
    assert!(
        replayed >= 2,
        "the saved findings are there ({replayed} replayed)"
    );
}
