//! Reconciliation: from actions to the active files of one version.
//!
//! Commits are fed newest first, the checkpoint last. A logical file is identified by its path
//! (however it is spelled: percent-encoding and `file:` forms are canonical first) and
//! deletion vector id; the newest action for it wins, and a `remove` is a tombstone that
//! hides every older `add` of the same logical file. The newest `protocol` and `metaData` win.
//!
//! The protocol allows one commit at most one action of each type (`add`, `remove`) per
//! logical file; a writer that repeats one anyway gets the first of them, as delta_kernel
//! keeps it, and not its rows twice. An `add` and a `remove` of one file in one commit never
//! hide each other.

use std::borrow::Cow;
use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::actions::{Action, Add, CommitInfo, DeletionVectorDescriptor, Metadata, Protocol};
use crate::error::{DeltaError, Result};

/// The state of a snapshot after replay.
#[derive(Debug, Clone)]
pub struct Reconciled {
    /// The version replayed.
    pub version: u64,
    /// The table's protocol.
    pub protocol: Protocol,
    /// The table's metadata.
    pub metadata: Metadata,
    /// Active files: checkpoint files first, then commits oldest to newest.
    pub files: Vec<Add>,
    /// `commitInfo` of the newest commit replayed, if it had one.
    pub latest_commit_info: Option<CommitInfo>,
}

/// A logical file already decided by a newer action: its key's hash (kept, so growing the
/// table rehashes nothing) and where the key lives.
#[derive(Debug, Clone, Copy)]
struct Seen {
    hash: u64,
    at: KeyAt,
}

/// Where the key of a [`Seen`] file lives.
#[derive(Debug, Clone, Copy)]
enum KeyAt {
    /// The `add` at `adds[index]`.
    Added { index: u32 },
    /// The `remove` whose key is `removed[index]`.
    Removed { index: u32 },
}

/// Reconciles actions fed newest first.
///
/// The logical files seen so far are a hash table of positions: an `add`'s key is read from
/// the kept `add` itself, so a log of a million files does not hold each path twice; only
/// `remove` keys (whose actions are dropped) are kept as strings.
///
/// The kept `add`s are one vector in the order they are fed (newest commit first, the
/// checkpoint last), cut into blocks; [`Replay::finish`] puts the blocks in file order in
/// place, so the active files are never copied into a second vector.
#[derive(Debug, Default)]
pub struct Replay {
    seen: HashTable<Seen>,
    hasher: DefaultHashBuilder,
    removed: Vec<(String, String)>,
    protocol: Option<Protocol>,
    metadata: Option<Metadata>,
    /// Every kept `add`: each commit's block, newest commit first, then the checkpoint's.
    adds: Vec<Add>,
    /// Where each block of `adds` after the first starts.
    block_starts: Vec<usize>,
    latest_commit_info: Option<CommitInfo>,
    commits_seen: usize,
    /// The keys of the commit being pushed.
    current_keys: HashTable<Seen>,
    /// `protocol` and `metaData` actions of the commit being pushed.
    current_table_actions: (usize, usize),
}

/// The path part of a logical file's identity: the same file whatever the spelling of its
/// path. Percent-decoded, and an absolute local path with or without its scheme (`/x`,
/// `file:/x`, `file:///x`, `file://localhost/x`) is `file:///x`, as Spark qualifies paths
/// before it reconciles them. A path with neither `%` nor `:` nor a leading `/` (nearly
/// every path a writer puts in the log) is its own key, borrowed.
fn canonical_path(path: &str) -> Cow<'_, str> {
    if !path.starts_with('/') && !path.bytes().any(|b| b == b'%' || b == b':') {
        return Cow::Borrowed(path);
    }
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let local = match decoded.strip_prefix("file://") {
        Some(rest) => rest.strip_prefix("localhost").unwrap_or(rest),
        None => decoded.strip_prefix("file:").unwrap_or(&decoded),
    };
    if local.starts_with('/') {
        return Cow::Owned(format!("file://{local}"));
    }
    Cow::Owned(decoded.into_owned())
}

/// [`canonical_path`] of an owned path, without a copy when it is its own key.
fn into_canonical_path(path: String) -> String {
    match canonical_path(&path) {
        Cow::Borrowed(_) => path,
        Cow::Owned(key) => key,
    }
}

/// The deletion vector part of a logical file's identity (empty without one).
fn dv_id(dv: Option<&DeletionVectorDescriptor>) -> Cow<'static, str> {
    dv.map_or(Cow::Borrowed(""), |d| Cow::Owned(d.unique_id()))
}

impl Replay {
    /// An empty replay.
    pub fn new() -> Self {
        Self::default()
    }

    fn hash(&self, path: &str, dv: &str) -> u64 {
        self.hasher.hash_one((path, dv))
    }

    /// The key an entry of `seen` or `current_keys` stands for.
    fn key_of<'a>(
        adds: &'a [Add],
        removed: &'a [(String, String)],
        at: KeyAt,
    ) -> (Cow<'a, str>, Cow<'a, str>) {
        match at {
            KeyAt::Added { index } => match adds.get(index as usize) {
                Some(add) => (
                    canonical_path(&add.path),
                    dv_id(add.deletion_vector.as_ref()),
                ),
                None => (Cow::Borrowed(""), Cow::Borrowed("")),
            },
            KeyAt::Removed { index } => match removed.get(index as usize) {
                Some((p, d)) => (Cow::Borrowed(p.as_str()), Cow::Borrowed(d.as_str())),
                None => (Cow::Borrowed(""), Cow::Borrowed("")),
            },
        }
    }

    /// Whether a newer action decided the logical file `(path, dv)` (`path` canonical).
    fn is_seen(&self, hash: u64, path: &str, dv: &str) -> bool {
        let (adds, removed) = (&self.adds, &self.removed);
        self.seen
            .find(hash, |s| {
                s.hash == hash
                    && Self::key_of(adds, removed, s.at) == (Cow::Borrowed(path), Cow::Borrowed(dv))
            })
            .is_some()
    }

    /// Whether the commit being pushed already has an action of the same type (`add`s when
    /// `add`, else `remove`s) for `(path, dv)`.
    fn is_repeated(&self, hash: u64, path: &str, dv: &str, add: bool) -> bool {
        let (adds, removed) = (&self.adds, &self.removed);
        self.current_keys
            .find(hash, |s| {
                s.hash == hash
                    && matches!(s.at, KeyAt::Added { .. }) == add
                    && Self::key_of(adds, removed, s.at) == (Cow::Borrowed(path), Cow::Borrowed(dv))
            })
            .is_some()
    }

    /// Feeds the actions of one commit; commits must come newest first.
    #[cfg(test)]
    pub fn push_commit(&mut self, actions: impl IntoIterator<Item = Action>) {
        self.begin_commit();
        for action in actions {
            self.push_commit_action(action);
        }
        if let Err(e) = self.end_commit("commit.json") {
            panic!("{e}");
        }
    }

    /// Starts the next (older) commit; its actions follow with
    /// [`push_commit_action`](Self::push_commit_action), then [`end_commit`](Self::end_commit).
    pub fn begin_commit(&mut self) {
        self.commits_seen += 1;
        self.start_block();
        self.current_keys.clear();
        self.current_table_actions = (0, 0);
    }

    /// Starts the block of the next commit (or of the checkpoint) in `adds`.
    fn start_block(&mut self) {
        let start = self.adds.len();
        if start > 0 && self.block_starts.last() != Some(&start) {
            self.block_starts.push(start);
        }
    }

    /// Makes room for `actions` more actions in the commit begun last.
    pub fn reserve_commit(&mut self, actions: usize) {
        // One vector holds every kept `add`: doubling it could leave half of it unused.
        // Growing by at least a quarter keeps a log of many large commits linear.
        let spare = self.adds.capacity() - self.adds.len();
        if spare < actions {
            self.adds.reserve_exact(actions.max(self.adds.len() / 4));
        }
        self.current_keys.reserve(actions, |s| s.hash);
    }

    /// One action of the commit begun last.
    pub fn push_commit_action(&mut self, action: Action) {
        match action {
            Action::Add(add) => {
                let dv = dv_id(add.deletion_vector.as_ref());
                let key = canonical_path(&add.path);
                let hash = self.hash(&key, &dv);
                if !self.is_seen(hash, &key, &dv) && !self.is_repeated(hash, &key, &dv, true) {
                    drop(key);
                    let at = KeyAt::Added {
                        index: self.adds.len() as u32,
                    };
                    self.current_keys
                        .insert_unique(hash, Seen { hash, at }, |s| s.hash);
                    self.adds.push(add);
                }
            }
            Action::Remove(remove) => {
                let dv = dv_id(remove.deletion_vector.as_ref()).into_owned();
                let key = into_canonical_path(remove.path);
                let hash = self.hash(&key, &dv);
                if !self.is_seen(hash, &key, &dv) && !self.is_repeated(hash, &key, &dv, false) {
                    let index = self.removed.len() as u32;
                    self.removed.push((key, dv));
                    let at = KeyAt::Removed { index };
                    self.current_keys
                        .insert_unique(hash, Seen { hash, at }, |s| s.hash);
                }
            }
            Action::CommitInfo(info) if self.commits_seen == 1 => {
                self.latest_commit_info = Some(info)
            }
            other => {
                match &other {
                    Action::Protocol(_) => self.current_table_actions.0 += 1,
                    Action::Metadata(_) => self.current_table_actions.1 += 1,
                    _ => {}
                }
                self.take_table_action(other)
            }
        }
    }

    /// Ends the commit begun last (the file `path`): its files become visible to older
    /// actions only now, so that actions of one commit never hide each other.
    ///
    /// A commit with more than one `protocol` or `metaData` action is refused
    /// ([`DeltaError::InvalidLog`]): the protocol forbids it, and which of them a reader
    /// took would decide, by line order, whether a reader feature is honoured.
    pub fn end_commit(&mut self, path: &str) -> Result<()> {
        let (protocols, metadata) = self.current_table_actions;
        for (count, what) in [(protocols, "protocol"), (metadata, "metaData")] {
            if count > 1 {
                return Err(DeltaError::invalid_log(
                    path,
                    format!("{count} {what} actions in one commit (at most one is allowed)"),
                ));
            }
        }
        // A file both added and removed in one commit has two entries; either answers a
        // lookup.
        self.seen.reserve(self.current_keys.len(), |s| s.hash);
        for entry in self.current_keys.drain() {
            self.seen.insert_unique(entry.hash, entry, |s| s.hash);
        }
        Ok(())
    }

    /// Feeds the actions of the checkpoint (all parts and sidecars); it comes last.
    ///
    /// A checkpoint holds each logical file once; one that repeats a file (in one part or
    /// across parts and sidecars) gets its first `add`, as within a commit, not its rows
    /// twice.
    pub fn push_checkpoint(&mut self, actions: Vec<Action>) {
        self.start_block();
        self.seen.reserve(actions.len(), |s| s.hash);
        for action in actions {
            match action {
                Action::Add(add) => {
                    let dv = dv_id(add.deletion_vector.as_ref());
                    let key = canonical_path(&add.path);
                    let hash = self.hash(&key, &dv);
                    if !self.is_seen(hash, &key, &dv) {
                        drop(key);
                        let at = KeyAt::Added {
                            index: self.adds.len() as u32,
                        };
                        self.seen.insert_unique(hash, Seen { hash, at }, |s| s.hash);
                        self.adds.push(add);
                    }
                }
                other => self.take_table_action(other),
            }
        }
    }

    fn take_table_action(&mut self, action: Action) {
        match action {
            Action::Protocol(p) if self.protocol.is_none() => self.protocol = Some(p),
            Action::Metadata(m) if self.metadata.is_none() => self.metadata = Some(m),
            _ => {}
        }
    }

    /// Ends the replay of `version`.
    pub fn finish(self, version: u64) -> Result<Reconciled> {
        let protocol = self
            .protocol
            .ok_or(DeltaError::MissingProtocol { version })?;
        let metadata = self
            .metadata
            .ok_or(DeltaError::MissingMetadata { version })?;
        if metadata.schema_string.trim().is_empty() {
            return Err(DeltaError::invalid_schema(format!(
                "the metaData action of version {version} has no schemaString"
            )));
        }
        let mut files = self.adds;
        in_file_order(&mut files, &self.block_starts);
        Ok(Reconciled {
            version,
            protocol,
            metadata,
            files,
            latest_commit_info: self.latest_commit_info,
        })
    }
}

/// Reverses the order of the blocks of `items` (cut at `starts`, ascending), keeping the
/// order within each block, in place: the whole is reversed, then each block back.
fn in_file_order<T>(items: &mut [T], starts: &[usize]) {
    let len = items.len();
    items.reverse();
    let mut end = len;
    for &start in starts.iter().rev().chain(std::iter::once(&0)) {
        // The block `start..end` now lies at `len - end..len - start`.
        if let Some(block) = items.get_mut(len - end..len - start) {
            block.reverse();
        }
        end = start;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::actions::{DeletionVectorDescriptor, Remove};

    fn add(path: &str, dv: Option<&str>) -> Action {
        Action::Add(Add {
            path: path.into(),
            partition_values: Default::default(),
            size: 1,
            modification_time: 0,
            data_change: true,
            stats: None,
            tags: None,
            deletion_vector: dv.map(|d| DeletionVectorDescriptor {
                storage_type: "u".into(),
                path_or_inline_dv: d.into(),
                offset: Some(1),
                size_in_bytes: 10,
                cardinality: 1,
            }),
            base_row_id: None,
            default_row_commit_version: None,
        })
    }

    fn remove(path: &str, dv: Option<&str>) -> Action {
        let Action::Add(a) = add(path, dv) else {
            return Action::CommitInfo(CommitInfo::default());
        };
        Action::Remove(Remove {
            path: a.path,
            deletion_timestamp: None,
            data_change: true,
            deletion_vector: a.deletion_vector,
        })
    }

    fn table_actions() -> Vec<Action> {
        vec![
            Action::Protocol(Protocol {
                min_reader_version: 1,
                min_writer_version: 2,
                reader_features: None,
                writer_features: None,
            }),
            Action::Metadata(Metadata {
                id: "id".into(),
                name: None,
                description: None,
                format: Default::default(),
                schema_string: "{}".into(),
                partition_columns: vec![],
                configuration: Default::default(),
                created_time: None,
            }),
        ]
    }

    fn paths(r: &Reconciled) -> Vec<(String, bool)> {
        r.files
            .iter()
            .map(|f| (f.path.clone(), f.deletion_vector.is_some()))
            .collect()
    }

    #[test]
    fn blocks_come_back_in_file_order() {
        let mut items = vec![7, 8, 9, 4, 5, 1, 2, 3];
        in_file_order(&mut items, &[3, 5]);
        assert_eq!(items, [1, 2, 3, 4, 5, 7, 8, 9]);
        let mut items = vec![3, 4, 1, 2];
        in_file_order(&mut items, &[2, 2, 4]);
        assert_eq!(items, [1, 2, 3, 4]);
        let mut items = vec![1, 2, 3];
        in_file_order(&mut items, &[]);
        assert_eq!(items, [1, 2, 3]);
        let mut none: Vec<u8> = Vec::new();
        in_file_order(&mut none, &[]);
        assert!(none.is_empty());
    }

    #[test]
    fn files_are_in_checkpoint_then_commit_order() {
        let mut r = Replay::new();
        r.push_commit([add("c2-a", None), add("c2-b", None)]);
        r.push_commit([]);
        r.push_commit([add("c1-a", None), remove("cp-b", None), add("c1-b", None)]);
        let mut checkpoint = table_actions();
        checkpoint.extend([add("cp-a", None), add("cp-b", None), add("cp-c", None)]);
        r.push_checkpoint(checkpoint);
        let done = r.finish(3).map(|d| paths(&d));
        let order: Vec<&str> = vec!["cp-a", "cp-c", "c1-a", "c1-b", "c2-a", "c2-b"];
        let expected: Vec<(String, bool)> =
            order.into_iter().map(|p| (p.to_string(), false)).collect();
        assert_eq!(done.ok(), Some(expected));
    }

    #[test]
    fn a_file_repeated_in_a_checkpoint_is_read_once() {
        let mut r = Replay::new();
        r.push_commit([remove("gone", None)]);
        let mut cp = table_actions();
        cp.extend([
            add("a%20b", None),
            add("gone", None),
            add("c", Some("x")),
            add("a b", None),
            add("gone", None),
            add("c", Some("x")),
            add("c", None),
        ]);
        r.push_checkpoint(cp);
        let done = r.finish(1).map(|d| paths(&d)).unwrap_or_default();
        let expected: Vec<(String, bool)> = vec![
            ("a%20b".into(), false),
            ("c".into(), true),
            ("c".into(), false),
        ];
        assert_eq!(done, expected);
    }

    #[test]
    fn newest_action_wins_per_path_and_dv() {
        let mut r = Replay::new();
        // v2: a gets a deletion vector (remove old, add new); c removed.
        r.push_commit(vec![
            remove("a", None),
            add("a", Some("x")),
            remove("c", None),
        ]);
        // v1: add c
        r.push_commit(vec![add("c", None)]);
        // checkpoint at v0: a, b
        let mut cp = table_actions();
        cp.extend([add("a", None), add("b", None)]);
        r.push_checkpoint(cp);
        let done = r.finish(2);
        let done = done.as_ref().map(paths).unwrap_or_default();
        assert_eq!(done, vec![("b".into(), false), ("a".into(), true)]);
    }

    #[test]
    fn re_add_after_remove_is_active() {
        let mut r = Replay::new();
        r.push_commit(vec![add("a", None)]);
        r.push_commit(vec![remove("a", None)]);
        let mut first = table_actions();
        first.push(add("a", None));
        r.push_commit(first);
        let done = r.finish(2);
        assert_eq!(done.map(|d| d.files.len()).ok(), Some(1));
    }

    #[test]
    fn an_action_repeated_in_one_commit_counts_once() {
        let mut r = Replay::new();
        // v2: a added twice (with different sizes: the first is kept), b removed twice.
        let mut first = add("a", None);
        if let Action::Add(a) = &mut first {
            a.size = 7;
        }
        r.push_commit(vec![
            first,
            add("a", None),
            remove("b", None),
            remove("b", None),
        ]);
        // v1: b, c; a with a deletion vector is another logical file, also repeated.
        r.push_commit(vec![
            add("b", None),
            add("c", None),
            add("a", Some("x")),
            add("a", Some("x")),
        ]);
        let mut v0 = table_actions();
        v0.extend([add("d", None), add("d", None)]);
        r.push_commit(v0);
        let done = r.finish(2).unwrap_or_else(|e| panic!("{e}"));
        let mut got = paths(&done);
        got.sort();
        let want: Vec<(String, bool)> = vec![
            ("a".into(), false),
            ("a".into(), true),
            ("c".into(), false),
            ("d".into(), false),
        ];
        assert_eq!(got, want);
        let a = done
            .files
            .iter()
            .find(|f| f.path == "a" && f.deletion_vector.is_none());
        assert_eq!(a.map(|f| f.size), Some(7));
    }

    #[test]
    fn an_add_and_a_remove_in_one_commit_do_not_hide_each_other() {
        let mut r = Replay::new();
        // v1 removes and re-adds a (as a writer replacing a file's metadata may).
        r.push_commit(vec![remove("a", None), add("a", None)]);
        let mut v0 = table_actions();
        v0.push(add("a", None));
        r.push_commit(v0);
        let done = r.finish(1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(paths(&done), vec![("a".to_string(), false)]);
    }

    #[test]
    fn missing_protocol_or_metadata_fails() {
        let mut r = Replay::new();
        r.push_commit(vec![add("a", None)]);
        assert_eq!(
            r.finish(0).err().map(|e| e.code()),
            Some("missing_protocol")
        );
        let mut r = Replay::new();
        r.push_commit(vec![table_actions().remove(0)]);
        assert_eq!(
            r.finish(0).err().map(|e| e.code()),
            Some("missing_metadata")
        );
    }

    #[test]
    fn two_protocol_or_metadata_actions_in_one_commit_are_refused() {
        for twice in 0..2 {
            let mut r = Replay::new();
            r.begin_commit();
            let mut actions = table_actions();
            actions.push(actions[twice].clone());
            actions.push(add("a", None));
            actions.into_iter().for_each(|a| r.push_commit_action(a));
            let err = r.end_commit("_delta_log/00000000000000000000.json");
            let err = err.err().map(|e| (e.code(), e.to_string()));
            assert!(
                matches!(&err, Some(("invalid_log", m)) if m.contains("in one commit")),
                "{err:?}"
            );
        }
        // One of each in each of two commits is the normal case.
        let mut r = Replay::new();
        r.push_commit(table_actions());
        r.push_commit(table_actions());
        assert!(r.finish(1).is_ok());
    }

    #[test]
    fn a_remove_spelled_differently_removes_the_same_file() {
        for (added, removed) in [
            ("part=p0/f.parquet", "part%3Dp0/f.parquet"),
            ("part%3Dp0/f.parquet", "part=p0/f.parquet"),
            ("/some/absolute/path", "file:/some/absolute/path"),
            ("/some/absolute/path", "file:///some/absolute/path"),
            (
                "/some/with%20space/p@%23h",
                "file:/some/with%20space/p@%23h",
            ),
            ("file://localhost/x/y", "/x/y"),
        ] {
            let mut r = Replay::new();
            r.push_commit(vec![remove(removed, None)]);
            let mut v0 = table_actions();
            v0.push(add(added, None));
            v0.push(add("other.parquet", None));
            r.push_commit(v0);
            let done = r.finish(1).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                paths(&done),
                vec![("other.parquet".to_string(), false)],
                "{added} removed by {removed}"
            );
        }
        // Different files stay different.
        for (added, removed) in [("a%2520b", "a%20b"), ("/x/y", "x/y"), ("s3://b/x", "/x")] {
            let mut r = Replay::new();
            r.push_commit(vec![remove(removed, None)]);
            let mut v0 = table_actions();
            v0.push(add(added, None));
            r.push_commit(v0);
            let done = r.finish(1).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(paths(&done).len(), 1, "{added} is not {removed}");
        }
    }

    #[test]
    fn a_checkpoint_add_removed_under_another_spelling_is_gone() {
        let mut r = Replay::new();
        r.push_commit(vec![remove("file:/t/a%20b.parquet", None)]);
        let mut checkpoint = table_actions();
        checkpoint.push(add("/t/a b.parquet", None));
        r.push_checkpoint(checkpoint);
        let done = r.finish(1).unwrap_or_else(|e| panic!("{e}"));
        assert!(done.files.is_empty(), "{:?}", paths(&done));
    }
}
