//! The [`RangeRead`] contract as checks: the same questions for every store, and the answers
//! the trait's doc (`src/io/mod.rs`) promises. Compiled into both test binaries with
//! `#[path]`: natively (`tests/native/range_read_conformance.rs`: memory, local, HTTP, S3)
//! and in headless Chromium (`tests/wasm/range_read.rs`: the fetch store over HTTP).
//!
//! A [`Fixture`] says what the store holds; [`conform`] runs every check and panics with
//! every answer that breaks the contract, naming the store and the check. There is no list
//! of tolerated differences: every store passes every check.
//!
//! Checked: whole gets; ranges at the start, middle and end, one byte at each end of every
//! object; zero-length ranges (on an empty object, at the end, on a missing object); ranges
//! past the end and reversed ranges (`io`, not transient); a missing object (`not_found` for
//! every call, naming the path, in the load phase under `_delta_log/`); `size` (the length,
//! or "cannot tell"); listing where the store lists (string prefixes, `start_after` that
//! names no object) and `Ok(None)` where it does not; a name with a space, `=` and a
//! literal `%3A`; and 256 reads at once.

use std::collections::BTreeMap;
use std::ops::Range;

use delta_arrow_reader::io::RangeRead;
use delta_arrow_reader::Phase;
use futures::StreamExt;

/// What a store holds, and what to ask it.
pub struct Fixture {
    /// Objects and their bytes. For a store that lists: every object under its root.
    pub objects: Vec<(String, Vec<u8>)>,
    /// The object ranges are cut from: at least 8 KiB.
    pub data: String,
    /// An object of no bytes.
    pub empty: String,
    /// An object whose name holds a space, `=` and a literal `%3A`, at least 5 bytes.
    pub special: String,
    /// A path outside `_delta_log/` with no object.
    pub missing: String,
    /// A path under `_delta_log/` with no object.
    pub missing_log: String,
    /// Whether the store lists.
    pub lists: bool,
    /// The listings asked for: `(prefix, start_after)`.
    pub listings: Vec<(String, Option<String>)>,
}

impl Fixture {
    fn bytes(&self, path: &str) -> &[u8] {
        self.objects
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, b)| b.as_slice())
            .unwrap_or_else(|| panic!("no fixture object {path}"))
    }

    fn data_len(&self) -> u64 {
        self.bytes(&self.data).len() as u64
    }

    /// What a listing of `prefix` after `after` must give: path → size.
    fn want_listing(&self, prefix: &str, after: Option<&str>) -> BTreeMap<String, u64> {
        self.objects
            .iter()
            .filter(|(p, _)| p.starts_with(prefix) && after.is_none_or(|a| p.as_str() > a))
            .map(|(p, b)| (p.clone(), b.len() as u64))
            .collect()
    }
}

type Outcome = Result<(), String>;

fn check(ok: bool, what: impl FnOnce() -> String) -> Outcome {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}

async fn get_is(store: &dyn RangeRead, path: &str, want: &[u8]) -> Outcome {
    match store.get(path).await {
        Ok(b) => check(b == want, || {
            format!("get {path}: {} bytes, want {}", b.len(), want.len())
        }),
        Err(e) => Err(format!("get {path}: {e}")),
    }
}

async fn range_is(f: &Fixture, store: &dyn RangeRead, path: &str, range: Range<u64>) -> Outcome {
    let want = &f.bytes(path)[range.start as usize..range.end as usize];
    match store.get_range(path, range.clone()).await {
        Ok(b) => check(b == want, || {
            format!("get_range {path} {range:?}: {} bytes differ", b.len())
        }),
        Err(e) => Err(format!("get_range {path} {range:?}: {e}")),
    }
}

/// That `result` failed with `code`, was not transient and named `path`.
fn failed_with<T>(result: delta_arrow_reader::Result<T>, code: &str, path: &str) -> Outcome {
    match result {
        Ok(_) => Err(format!("succeeded, want error {code}")),
        Err(e) if e.code() != code => Err(format!("code {} ({e}), want {code}", e.code())),
        Err(e) if e.is_transient() => Err(format!("transient ({e}): asking again changes nothing")),
        Err(e) => check(e.to_string().contains(path), || {
            format!("the error does not name {path}: {e}")
        }),
    }
}

async fn range_fails(store: &dyn RangeRead, path: &str, range: Range<u64>, code: &str) -> Outcome {
    failed_with(store.get_range(path, range.clone()).await, code, path)
        .map_err(|e| format!("get_range {path} {range:?}: {e}"))
}

async fn whole_gets(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    for (path, bytes) in &f.objects {
        get_is(store, path, bytes).await?;
    }
    Ok(())
}

async fn ranges(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    let len = f.data_len();
    for range in [
        0..10,
        len / 7..len / 7 + 4000,
        len / 2..len / 2 + 1,
        len - 10..len,
        0..len,
    ] {
        range_is(f, store, &f.data, range).await?;
    }
    for (path, bytes) in f.objects.iter().filter(|(_, b)| !b.is_empty()) {
        let n = bytes.len() as u64;
        range_is(f, store, path, 0..1).await?;
        range_is(f, store, path, n - 1..n).await?;
    }
    Ok(())
}

async fn zero_length(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    let len = f.data_len();
    for range in [0..0, 500..500, len..len] {
        range_is(f, store, &f.data, range).await?;
    }
    range_is(f, store, &f.empty, 0..0).await
}

async fn past_the_end(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    let len = f.data_len();
    for range in [len - 5..len + 5, len + 10..len + 20, len + 10..len + 10] {
        range_fails(store, &f.data, range, "io").await?;
    }
    range_fails(store, &f.empty, 0..1, "io").await?;
    range_fails(store, &f.empty, 1..1, "io").await
}

async fn reversed(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    #[allow(clippy::reversed_empty_ranges)]
    let range = 10..5;
    range_fails(store, &f.data, range.clone(), "io").await?;
    range_fails(store, &f.missing, range, "io").await
}

/// A missing object: `not_found` for every call that reads it, naming it, in the phase its
/// path belongs to.
async fn missing(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    for (path, phase) in [(&f.missing, Phase::Read), (&f.missing_log, Phase::Load)] {
        let got = store.get(path).await;
        if let Some(e) = got.as_ref().err().filter(|e| e.phase() != phase) {
            return Err(format!("get {path}: phase {:?}, want {phase:?}", e.phase()));
        }
        failed_with(got, "not_found", path).map_err(|e| format!("get {path}: {e}"))?;
        range_fails(store, path, 0..4, "not_found").await?;
        range_fails(store, path, 0..0, "not_found").await?;
        range_fails(store, path, 3..3, "not_found").await?;
        match store.size(path).await {
            Ok(None) => {}
            Ok(Some(n)) => return Err(format!("size {path}: Some({n})")),
            Err(e) => {
                failed_with(Err::<(), _>(e), "not_found", path).map_err(|e| format!("size: {e}"))?
            }
        }
    }
    Ok(())
}

async fn sizes(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    for (path, bytes) in &f.objects {
        match store.size(path).await {
            Ok(None) => {}
            Ok(Some(n)) => check(n == bytes.len() as u64, || {
                format!("size {path}: {n}, want {}", bytes.len())
            })?,
            Err(e) => return Err(format!("size {path}: {e}")),
        }
    }
    Ok(())
}

async fn listing_is(
    f: &Fixture,
    store: &dyn RangeRead,
    prefix: &str,
    after: Option<&str>,
) -> Outcome {
    let what = format!("list {prefix:?} after {after:?}");
    let listed = store
        .list(prefix, after)
        .await
        .map_err(|e| format!("{what}: {e}"))?;
    let got: Option<BTreeMap<String, u64>> =
        listed.map(|v| v.into_iter().map(|e| (e.path, e.size)).collect());
    match (got, f.lists) {
        (None, false) => Ok(()),
        (Some(got), true) => {
            let want = f.want_listing(prefix, after);
            check(got == want, || format!("{what}: {got:?}, want {want:?}"))
        }
        (None, true) => Err(format!("{what}: Ok(None) from a store that lists")),
        (Some(got), false) => Err(format!("{what}: {got:?} from a store that cannot list")),
    }
}

async fn listing(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    for (prefix, after) in &f.listings {
        listing_is(f, store, prefix, after.as_deref()).await?;
    }
    Ok(())
}

/// Every listed path is one `get` finds (names are never decoded or encoded).
async fn listed_names_read_back(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    let listed = store
        .list("", None)
        .await
        .map_err(|e| format!("list: {e}"))?;
    for entry in listed.unwrap_or_default() {
        get_is(store, &entry.path, f.bytes(&entry.path)).await?;
    }
    Ok(())
}

async fn special_name(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    let path = f.special.as_str();
    let want = f.bytes(path);
    get_is(store, path, want).await?;
    range_is(f, store, path, 2..5).await?;
    match store.size(path).await {
        Ok(None) => Ok(()),
        Ok(Some(n)) if n == want.len() as u64 => Ok(()),
        other => Err(format!("size {path}: {other:?}")),
    }
}

/// 256 reads at once, 64 in flight: ranges of every size across the data object and gets.
async fn concurrent(f: &Fixture, store: &dyn RangeRead) -> Outcome {
    let len = f.data_len();
    let reads = (0..256u64).map(|i| {
        let start = (i * 7919) % len;
        let end = (start + 1 + i * 37).min(len);
        async move {
            if i % 16 == 0 {
                get_is(store, &f.data, f.bytes(&f.data)).await
            } else {
                range_is(f, store, &f.data, start..end).await
            }
        }
    });
    let results: Vec<Outcome> = futures::stream::iter(reads)
        .buffer_unordered(64)
        .collect()
        .await;
    let failed: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    check(failed.is_empty(), || {
        format!("{} of 256 reads failed: {:?}", failed.len(), failed.first())
    })
}

/// Runs every check on `store`, holding `fixture`; panics with every answer that breaks the
/// contract.
pub async fn conform(name: &str, store: &dyn RangeRead, fixture: &Fixture) {
    let (f, s) = (fixture, store);
    assert!(f.data_len() >= 8192, "the data object is too small");
    let outcomes: Vec<(&str, Outcome)> = vec![
        ("get", whole_gets(f, s).await),
        ("get_range", ranges(f, s).await),
        ("zero_length", zero_length(f, s).await),
        ("past_the_end", past_the_end(f, s).await),
        ("reversed", reversed(f, s).await),
        ("missing", missing(f, s).await),
        ("size", sizes(f, s).await),
        ("list", listing(f, s).await),
        ("listed_names_read_back", listed_names_read_back(f, s).await),
        ("special_name", special_name(f, s).await),
        ("concurrent", concurrent(f, s).await),
    ];
    let mut failures = Vec::new();
    for (check, outcome) in outcomes {
        match outcome {
            Ok(()) => println!("{name} {check}: ok"),
            Err(e) => failures.push(format!("{check}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{name}:\n  {}", failures.join("\n  "));
}
