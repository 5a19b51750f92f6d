//! The wire form of Delta scans (feature `distributed`): every plan the DataFusion adapter
//! builds — full scans of every readable corpus table, filters, projections, limits, row
//! counts, aggregates, a join, byte-range tasks — goes through `datafusion-proto` with
//! [`DeltaPhysicalCodec`] and, decoded on a fresh `SessionContext`, returns the same rows.
//! Encoding is deterministic (the same scan gives the same bytes, before and after a round
//! trip), other nodes are refused without a byte written, and damaged or foreign wire forms
//! are refused with clear errors.

use crate::common;

use std::sync::Arc;

use datafusion::execution::TaskContext;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
use delta_arrow_reader::datafusion::{
    register_table, DeltaScanExec, IntraFileRepartitioning, ScanOptions,
};
use delta_arrow_reader::distributed::{
    ballista_physical_codec, decode_scan, delta_scans as scans, encode_scan, DeltaPhysicalCodec,
    SCAN_WIRE_VERSION,
};
use delta_arrow_reader::io::{ObjectStoreRange, Store};
use delta_arrow_reader::DeltaTableBuilder;

const DV: &str = "golden__dv-partitioned-with-checkpoint";
const LETTERS: &str = "dat__basic_partitioned";
const MAPPED: &str = "golden__table-with-columnmapping-mode-name";
const DV_LOGS: &str = "deltars__table_with_deletion_logs";

/// A session that splits scans into byte ranges whenever it can (so ranged tasks travel).
fn config(partitions: usize, ranged: bool) -> SessionConfig {
    let mut c = SessionConfig::new().with_target_partitions(partitions);
    if ranged {
        c.options_mut().optimizer.repartition_file_min_size = 0;
    }
    c
}

async fn ctx_for(tables: &[(&str, &str)], config: SessionConfig) -> Option<SessionContext> {
    ctx_with(tables, config, ScanOptions::default()).await
}

async fn ctx_with(
    tables: &[(&str, &str)],
    config: SessionConfig,
    options: ScanOptions,
) -> Option<SessionContext> {
    let ctx = SessionContext::new_with_config(config);
    for (name, table) in tables {
        let t = DeltaTableBuilder::new(common::table_dir(table).to_string_lossy())
            .load_table()
            .await
            .ok()?;
        register_table(&ctx, name, t, options.clone()).ok()?;
    }
    Some(ctx)
}

fn wire_forms(plan: &Arc<dyn ExecutionPlan>) -> Vec<Vec<u8>> {
    scans(plan)
        .iter()
        .map(|s| {
            let exec = s.downcast_ref::<DeltaScanExec>().map(encode_scan);
            exec.and_then(Result::ok).unwrap_or_default()
        })
        .collect()
}

/// What a round trip showed: the rows before and after, and how many scans and ranged
/// tasks the plan had.
struct Trip {
    before: Vec<String>,
    after: Vec<String>,
    scans: usize,
    ranged_tasks: usize,
}

async fn round_trip(
    ctx: &SessionContext,
    query: &str,
    codec: &dyn PhysicalExtensionCodec,
) -> Result<Trip, String> {
    let plan = ctx
        .sql(query)
        .await
        .map_err(|e| e.to_string())?
        .create_physical_plan()
        .await
        .map_err(|e| e.to_string())?;
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), codec)
        .map_err(|e| format!("encode: {e}"))?;
    let again = physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), codec)
        .map_err(|e| format!("encode: {e}"))?;
    assert_eq!(bytes, again, "{query}: encoding twice gave other bytes");
    let fresh = SessionContext::new();
    let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &fresh.task_ctx(), codec)
        .map_err(|e| format!("decode: {e}"))?;
    assert_eq!(
        wire_forms(&plan),
        wire_forms(&decoded),
        "{query}: a decoded scan encodes to other bytes"
    );
    let ranged_tasks = scans(&plan)
        .iter()
        .filter_map(|s| {
            s.downcast_ref::<DeltaScanExec>()
                .map(|e| e.scan().tasks().to_vec())
        })
        .flatten()
        .filter(|t| t.range.is_some())
        .count();
    let before = collect(Arc::clone(&plan), ctx.task_ctx())
        .await
        .map_err(|e| format!("run: {e}"))?;
    let after = collect(decoded, fresh.task_ctx())
        .await
        .map_err(|e| format!("run decoded: {e}"))?;
    Ok(Trip {
        before: common::sorted_rows(&before),
        after: common::sorted_rows(&after),
        scans: scans(&plan).len(),
        ranged_tasks,
    })
}

#[tokio::test]
async fn every_readable_corpus_table_round_trips() {
    let (mut tried, mut ranged, mut rows) = (0, 0, 0);
    for (name, _) in common::corpus_tables() {
        // Byte ranges wherever a file can be split.
        let always = ScanOptions {
            intra_file_repartitioning: IntraFileRepartitioning::Always,
            ..ScanOptions::default()
        };
        let Some(ctx) = ctx_with(&[("t", &name)], config(3, true), always).await else {
            continue;
        };
        // Tables the reader refuses to scan are checked elsewhere (corpus tests).
        let Ok(trip) = round_trip(&ctx, "SELECT * FROM t", &DeltaPhysicalCodec::default()).await
        else {
            continue;
        };
        assert_eq!(trip.before, trip.after, "{name}");
        assert_eq!(trip.scans, 1, "{name}");
        tried += 1;
        ranged += usize::from(trip.ranged_tasks > 0);
        rows += trip.before.len();
    }
    if !common::corpus_overridden() {
        assert!(tried >= 150, "only {tried} corpus tables round-tripped");
        assert!(ranged >= 20, "only {ranged} tables had byte-range tasks");
        assert!(rows > 10_000, "only {rows} rows");
    }
}

#[tokio::test]
async fn filters_projections_limits_aggregates_and_joins_round_trip() {
    let tables = [("d", DV), ("l", LETTERS), ("m", MAPPED), ("g", DV_LOGS)];
    for ranged in [false, true] {
        let ctx = ctx_for(&tables, config(4, ranged)).await;
        let Some(ctx) = ctx else {
            panic!("the tables did not load")
        };
        for query in [
            "SELECT * FROM d WHERE part = 1",
            "SELECT col1, part FROM d WHERE col1 > 10 AND part <> 2",
            "SELECT * FROM d WHERE part IN (0, 3) OR col2 = 'foo'",
            "SELECT number FROM l WHERE letter = 'a' OR number >= 5",
            "SELECT * FROM l WHERE letter IS NULL",
            "SELECT * FROM l WHERE letter IS NOT NULL AND NOT (number < 2)",
            "SELECT * FROM m WHERE \"LongType\" > 2",
            "SELECT * FROM m WHERE \"StringType\" LIKE '1%' OR \"DateType\" > DATE '2020-01-01'",
            "SELECT count(*) FROM d WHERE col1 > 0",
            "SELECT count(*) FROM g WHERE id IS NOT NULL",
            "SELECT * FROM d LIMIT 7",
            "SELECT part, count(*), sum(col1), min(col1), max(col2) FROM d GROUP BY part",
            "SELECT d.part, d.col1, l.letter FROM d JOIN l ON d.part = l.number",
            "SELECT l.letter, count(*) FROM d JOIN l ON d.part = l.number GROUP BY l.letter",
            "SELECT * FROM (SELECT * FROM d ORDER BY col1 DESC LIMIT 5) ORDER BY col1",
        ] {
            let trip = round_trip(&ctx, query, &DeltaPhysicalCodec::default())
                .await
                .unwrap_or_else(|e| panic!("{query}: {e}"));
            assert!(trip.scans >= 1, "{query}");
            if query.contains("LIMIT 7") {
                // Any 7 rows may come: the same count, each a row of the table.
                assert_eq!(trip.before.len(), 7, "{query}");
                assert_eq!(trip.after.len(), 7, "{query}");
            } else {
                assert!(!trip.before.is_empty(), "{query}");
                assert_eq!(trip.before, trip.after, "{query} (ranged {ranged})");
            }
        }
    }
}

#[tokio::test]
async fn the_ballista_codec_carries_delta_scans_too() {
    let ctx = ctx_for(&[("d", DV)], config(2, true)).await;
    let Some(ctx) = ctx else {
        panic!("the table did not load")
    };
    let codec = ballista_physical_codec();
    let trip = round_trip(
        &ctx,
        "SELECT part, sum(col1) FROM d GROUP BY part",
        codec.as_ref(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trip.before, trip.after);
    assert!(trip.before.len() > 1);
}

async fn one_scan() -> Arc<dyn ExecutionPlan> {
    let ctx = ctx_for(&[("d", DV)], config(2, false)).await;
    let Some(ctx) = ctx else {
        panic!("the table did not load")
    };
    let plan = ctx
        .sql("SELECT col1, part FROM d WHERE col1 > 1")
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .create_physical_plan()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    scans(&plan)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no scan in the plan"))
}

fn local(location: &delta_arrow_reader::io::TableLocation) -> datafusion::error::Result<Store> {
    let store = ObjectStoreRange::from_location(location, &Default::default())
        .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
    Ok(Arc::new(store))
}

#[tokio::test]
async fn the_wire_form_names_the_table_and_nothing_secret() {
    let scan = one_scan().await;
    let exec = scan
        .downcast_ref::<DeltaScanExec>()
        .unwrap_or_else(|| panic!("not a scan"));
    let bytes = encode_scan(exec).unwrap_or_else(|e| panic!("{e}"));
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json["format"], "delta-arrow-reader/scan");
    assert_eq!(json["version"], SCAN_WIRE_VERSION);
    assert!(json["table"]["root"]
        .as_str()
        .is_some_and(|r| r.starts_with("file://") && r.trim_end_matches('/').ends_with(DV)));
    assert_eq!(json["predicate"]["kind"], "compare");
    // Every task with its typed partition value and, where it has one, its deletion vector.
    let tasks = json["tasks"].as_array().cloned().unwrap_or_default();
    assert!(!tasks.is_empty());
    for t in &tasks {
        assert_eq!(t["partitionValues"][0][0], "part", "{t}");
        assert_eq!(t["partitionValues"][0][1]["type"], "integer", "{t}");
    }
    assert!(tasks.iter().any(|t| t["deletionVector"].is_object()));
    // Decoding gives the same rows as the original node.
    let decoded = decode_scan(&bytes, &local).unwrap_or_else(|e| panic!("{e}"));
    let task_ctx = Arc::new(TaskContext::default());
    let a = collect(Arc::clone(&scan), Arc::clone(&task_ctx)).await;
    let b = collect(Arc::new(decoded), task_ctx).await;
    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
    assert!(!a.is_empty());
    assert_eq!(common::sorted_rows(&a), common::sorted_rows(&b));
}

#[tokio::test]
async fn damaged_and_foreign_wire_forms_are_refused() {
    let scan = one_scan().await;
    let exec = scan
        .downcast_ref::<DeltaScanExec>()
        .unwrap_or_else(|| panic!("not a scan"));
    let bytes = encode_scan(exec).unwrap_or_else(|e| panic!("{e}"));
    let good: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        serde_json::to_vec(&v).unwrap_or_default()
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "not json",
            b"\x00\x01garbage".to_vec(),
            "not a scan's wire form",
        ),
        ("empty", Vec::new(), "not a scan's wire form"),
        (
            "other format",
            edit(&|v| v["format"] = "x/y".into()),
            "the format is",
        ),
        (
            "newer version",
            edit(&|v| v["version"] = 2.into()),
            "wire version 2",
        ),
        (
            "unknown field",
            edit(&|v| v["extra"] = 1.into()),
            "unknown field",
        ),
        (
            "task out of range",
            edit(&|v| v["partitions"][0][0] = 999.into()),
            "names file task 999",
        ),
        (
            "task twice",
            edit(&|v| {
                let first = v["partitions"][0][0].clone();
                if let Some(p) = v["partitions"][0].as_array_mut() {
                    p.push(first);
                }
            }),
            "in two partitions",
        ),
        (
            "range past the end",
            edit(&|v| v["tasks"][0]["range"] = serde_json::json!([0, u64::MAX])),
            "is not within",
        ),
        (
            "bad value",
            edit(&|v| v["tasks"][0]["partitionValues"][0][1]["value"] = "x".into()),
            "is not a integer value",
        ),
        (
            "unknown column",
            edit(&|v| v["projection"] = serde_json::json!(["no_such_column"])),
            "no_such_column",
        ),
        (
            "unsupported protocol",
            edit(&|v| {
                v["table"]["protocol"]["minReaderVersion"] = 3.into();
                v["table"]["protocol"]["readerFeatures"] = serde_json::json!(["futureFeature"]);
            }),
            "futureFeature",
        ),
        (
            "bad statistics",
            edit(&|v| v["statistics"] = "zz".into()),
            "statistics",
        ),
    ];
    for (what, bytes, expected) in cases {
        let err = decode_scan(&bytes, &local)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| panic!("{what}: decoded"));
        assert!(err.contains(expected), "{what}: {err}");
    }
}

#[tokio::test]
async fn other_nodes_are_refused_without_a_byte_written() {
    let ctx = SessionContext::new();
    let plan = ctx
        .sql("SELECT 1")
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .create_physical_plan()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut buf = Vec::new();
    let err = DeltaPhysicalCodec::default()
        .try_encode(plan, &mut buf, &DefaultPhysicalProtoConverter {})
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("DeltaScanExec only"), "{err}");
    assert!(buf.is_empty());
    // A plan without Delta scans goes through the composed codec unchanged.
    let codec = ballista_physical_codec();
    let trip = round_trip(&ctx, "SELECT 1 + 1", codec.as_ref()).await;
    assert_eq!(trip.map(|t| t.after).ok(), Some(vec!["2".to_string()]));
}
