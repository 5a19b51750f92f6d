use super::*;

fn ok<T>(r: Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn dv(id: &str) -> DeletionVectorDescriptor {
    DeletionVectorDescriptor {
        storage_type: "i".into(),
        path_or_inline_dv: id.into(),
        offset: None,
        size_in_bytes: 1,
        cardinality: 1,
    }
}

fn metadata(config: &[(&str, &str)], schema: &str) -> Metadata {
    Metadata {
        id: "t".into(),
        name: None,
        description: None,
        format: Default::default(),
        schema_string: schema.into(),
        partition_columns: vec![],
        configuration: config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        created_time: None,
    }
}

const SCHEMA: &str =
    r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}"#;
const OTHER: &str = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"x","type":"string","nullable":true,"metadata":{}}]}"#;

fn protocol() -> Protocol {
    Protocol {
        min_reader_version: 1,
        min_writer_version: 4,
        reader_features: None,
        writer_features: None,
    }
}

#[test]
fn cdc_files_replace_adds_and_removes() {
    let commit = br#"{"commitInfo":{"timestamp":10,"operation":"MERGE"}}
{"add":{"path":"a.parquet","partitionValues":{},"size":5,"modificationTime":1,"dataChange":true}}
{"remove":{"path":"b.parquet","dataChange":true}}
{"cdc":{"path":"_change_data/c.parquet","partitionValues":{"p":"1"},"size":7,"dataChange":false}}
"#;
    let c = ok(commit_changes(4, commit));
    assert_eq!(c.version, 4);
    assert_eq!(c.info_timestamp, Some(10));
    assert_eq!(c.files.len(), 1);
    let f = &c.files[0];
    assert_eq!(
        (f.path.as_str(), f.size),
        ("_change_data/c.parquet", Some(7))
    );
    assert_eq!(f.rows, ChangedRows::ChangeData);
    let values = f.partition_values.clone().unwrap_or_default();
    assert_eq!(values.get("p"), Some(&Some("1".to_string())));
}

#[test]
fn adds_insert_and_removes_delete_when_they_change_data() {
    let commit = br#"{"add":{"path":"a.parquet","partitionValues":{},"size":5,"modificationTime":1,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"x","sizeInBytes":1,"cardinality":1}}}
{"add":{"path":"compacted.parquet","partitionValues":{},"size":5,"modificationTime":1,"dataChange":false}}
{"remove":{"path":"b.parquet","dataChange":true,"size":3,"partitionValues":{"p":null}}}
{"remove":{"path":"c.parquet","dataChange":false}}
"#;
    let c = ok(commit_changes(1, commit));
    let kinds: Vec<(&str, &ChangedRows)> =
        c.files.iter().map(|f| (f.path.as_str(), &f.rows)).collect();
    assert_eq!(
        kinds,
        [
            (
                "b.parquet",
                &ChangedRows::Whole {
                    change: ChangeType::Delete,
                    deletion_vector: None
                }
            ),
            (
                "a.parquet",
                &ChangedRows::Whole {
                    change: ChangeType::Insert,
                    deletion_vector: Some(dv("x"))
                }
            ),
        ]
    );
    assert_eq!(c.files[0].size, Some(3));
}

#[test]
fn a_file_removed_and_added_again_is_its_deletion_vector_change() {
    let commit = br#"{"remove":{"path":"a.parquet","dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"old","sizeInBytes":1,"cardinality":1}}}
{"add":{"path":"a.parquet","partitionValues":{},"size":5,"modificationTime":1,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"new","sizeInBytes":1,"cardinality":1}}}
"#;
    let c = ok(commit_changes(2, commit));
    let rows: Vec<&ChangedRows> = c.files.iter().map(|f| &f.rows).collect();
    let changed = |change| ChangedRows::DeletionVectorChanged {
        change,
        before: Some(dv("old")),
        after: Some(dv("new")),
    };
    assert_eq!(
        rows,
        [&changed(ChangeType::Delete), &changed(ChangeType::Insert)]
    );
    assert!(c.files.iter().all(|f| f.size == Some(5)));
}

#[test]
fn a_file_action_without_data_change_or_with_a_negative_size_is_refused() {
    for commit in [
        &br#"{"add":{"path":"a","partitionValues":{},"size":5,"modificationTime":1}}"#[..],
        br#"{"remove":{"path":"a"}}"#,
        br#"{"add":{"path":"a","partitionValues":{},"size":-5,"modificationTime":1,"dataChange":true}}"#,
        br#"{"cdc":{"path":"a","partitionValues":{},"size":-1,"dataChange":false}}"#,
        b"{\"commitInfo\":{}}\nnot json",
    ] {
        let e = commit_changes(9, commit).err();
        let e = e.unwrap_or_else(|| panic!("accepted {}", String::from_utf8_lossy(commit)));
        assert_eq!(e.code(), "invalid_log", "{e}");
        assert!(e.to_string().contains("00000000000000000009.json"), "{e}");
    }
}

#[test]
fn in_commit_timestamps_and_times_of_commits() {
    let commit = br#"{"commitInfo":{"timestamp":10,"inCommitTimestamp":20}}"#;
    let c = ok(commit_changes(0, commit));
    let on = [(ENABLE_CHANGE_DATA_FEED, "true")];
    let rules = ok(ChangeFeedRules::new(
        0,
        &protocol(),
        &metadata(&on, SCHEMA),
        &ok(parse_schema(SCHEMA)),
    ));
    assert_eq!(ok(rules.commit_timestamp(&c, Some(30))), 30);
    assert_eq!(ok(rules.commit_timestamp(&c, None)), 10);
    let ict = [
        (ENABLE_CHANGE_DATA_FEED, "true"),
        (ENABLE_IN_COMMIT_TIMESTAMPS, "TRUE"),
    ];
    let with_ict = Protocol {
        min_writer_version: 7,
        writer_features: Some(vec!["inCommitTimestamp".into()]),
        ..protocol()
    };
    let without = ok(ChangeFeedRules::new(
        0,
        &protocol(),
        &metadata(&ict, SCHEMA),
        &ok(parse_schema(SCHEMA)),
    ));
    assert_eq!(ok(without.commit_timestamp(&c, Some(30))), 30);
    let rules = ok(ChangeFeedRules::new(
        0,
        &with_ict,
        &metadata(&ict, SCHEMA),
        &ok(parse_schema(SCHEMA)),
    ));
    assert_eq!(ok(rules.commit_timestamp(&c, Some(30))), 20);
    let untimed = br#"{"remove":{"path":"a","dataChange":true,"deletionTimestamp":40}}
{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":35,"dataChange":true}}"#;
    let untimed = ok(commit_changes(2, untimed));
    assert_eq!(ok(without.commit_timestamp(&untimed, None)), 40);
    assert_eq!(ok(without.commit_timestamp(&untimed, Some(50))), 50);
    let bare = ok(commit_changes(1, b"{\"commitInfo\":{}}"));
    assert_eq!(
        rules
            .commit_timestamp(&bare, Some(30))
            .map_err(|e| e.code()),
        Err("invalid_log")
    );
}

#[test]
fn the_feed_must_stay_enabled_the_schema_unchanged_and_the_protocol_readable() {
    let end = ok(parse_schema(SCHEMA));
    let on = [(ENABLE_CHANGE_DATA_FEED, "true")];
    let off = ChangeFeedRules::new(0, &protocol(), &metadata(&[], SCHEMA), &end)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        off.contains("version 0") && off.contains(ENABLE_CHANGE_DATA_FEED),
        "{off}"
    );
    let changed = ChangeFeedRules::new(3, &protocol(), &metadata(&on, OTHER), &end).err();
    assert_eq!(
        changed.map(|e| e.code()),
        Some("change_data_feed_unavailable")
    );

    let mut rules = ok(ChangeFeedRules::new(
        0,
        &protocol(),
        &metadata(&on, SCHEMA),
        &end,
    ));
    let line = |m: &Metadata| {
        format!(
            "{{\"metaData\":{}}}",
            serde_json::to_string(m).unwrap_or_default()
        )
    };
    let disabling = line(&metadata(&[(ENABLE_CHANGE_DATA_FEED, "false")], SCHEMA));
    let c = ok(commit_changes(5, disabling.as_bytes()));
    let e = rules
        .apply(&c)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("version 5"), "{e}");
    let widening = line(&metadata(&on, OTHER));
    let c = ok(commit_changes(6, widening.as_bytes()));
    assert!(rules.apply(&c).is_err());
    let unreadable = br#"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["catalogOwned"],"writerFeatures":[]}}"#;
    let c = ok(commit_changes(7, unreadable));
    assert_eq!(
        rules.apply(&c).err().map(|e| e.code()),
        Some("unsupported_feature")
    );
    let fine = line(&metadata(&on, SCHEMA));
    assert!(rules.apply(&ok(commit_changes(8, fine.as_bytes()))).is_ok());
}

#[test]
fn cut_or_garbled_commits_are_refused_or_read_never_a_panic() {
    let commit = br#"{"commitInfo":{"timestamp":10,"inCommitTimestamp":11}}
{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors","changeDataFeed"]}}
{"remove":{"path":"a.parquet","dataChange":true,"deletionTimestamp":9,"deletionVector":{"storageType":"i","pathOrInlineDv":"old","sizeInBytes":1,"cardinality":1}}}
{"add":{"path":"a.parquet","partitionValues":{"p":"1"},"size":5,"modificationTime":1,"dataChange":true}}
{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":7,"dataChange":false}}
"#;
    // Every prefix, and every byte replaced by characters JSON gives meaning to.
    for end in 0..commit.len() {
        let _ = commit_changes(0, &commit[..end]);
    }
    for i in 0..commit.len() {
        for b in [b'"', b'{', b'}', b'-', b'9', b'\n', 0xff] {
            let mut garbled = commit.to_vec();
            garbled[i] = b;
            if let Ok(c) = commit_changes(0, &garbled) {
                let cdc = c
                    .files
                    .iter()
                    .filter(|f| f.rows == ChangedRows::ChangeData)
                    .count();
                assert!(cdc == 0 || cdc == c.files.len());
            }
        }
    }
}
