//! Deletion vectors stored at an absolute path (`storageType` `p`): the file is found under the
//! table root and its rows are skipped; a path outside the table is a clear error.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use delta_arrow_reader::fixture::TableWriter;
use delta_arrow_reader::DeltaTableBuilder;
use serde_json::json;

fn table(dv_path: &str) -> TableWriter {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": false, "metadata": {}}]});
    let mut w = TableWriter::new();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from_iter_values(0..5))],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut add = w
        .write_data_file("part-0.parquet", &batch, json!({}), None)
        .unwrap_or_else(|e| panic!("{e}"));
    let (bytes, size) = common::dv_file([1, 3]);
    w.store().put("dv/deleted.bin", bytes);
    add["add"]["deletionVector"] = json!({
        "storageType": "p",
        "pathOrInlineDv": dv_path,
        "offset": 1,
        "sizeInBytes": size,
        "cardinality": 2,
    });
    let mut actions = TableWriter::create_actions(
        &schema,
        &[],
        json!({}),
        json!({"minReaderVersion": 3, "minWriterVersion": 7,
               "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}),
    );
    actions.push(add);
    w.commit("WRITE", actions);
    w
}

async fn ids(w: &TableWriter) -> delta_arrow_reader::Result<Vec<i64>> {
    let t = DeltaTableBuilder::new("memory://bucket/table/")
        .with_store(Arc::new(w.store().clone()))
        .load_table()
        .await?;
    let batches = t
        .scan()
        .build()
        .await?
        .into_stream()
        .collect_batches()
        .await?;
    Ok(batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .map(|a| a.values().to_vec())
                .unwrap_or_default()
        })
        .collect())
}

#[tokio::test]
async fn absolute_deletion_vector_inside_the_table() {
    let w = table("memory://bucket/table/dv/deleted.bin");
    assert_eq!(ids(&w).await.ok(), Some(vec![0, 2, 4]));
}

#[tokio::test]
async fn absolute_deletion_vector_outside_the_table_is_a_clear_error() {
    let w = table("s3://elsewhere/dv/deleted.bin");
    let err = ids(&w).await.err().unwrap_or_else(|| panic!("must fail"));
    assert_eq!(err.code(), "unsupported");
    assert!(err.to_string().contains("outside the table"), "{err}");
}
