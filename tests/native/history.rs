//! `DeltaTable::history` and `dar history` on corpus tables: one entry per commit the log
//! holds, newest first, each the commit file's own `commitInfo`; a limit; a table whose old
//! commits were cleaned up; time travel bounds the history.

use crate::common;

use delta_arrow_reader::DeltaTableBuilder;

/// The `commitInfo` of each commit file of `name`'s log, by version, read here on their own.
fn commit_infos(name: &str) -> Vec<(u64, Option<serde_json::Value>)> {
    let log = common::table_dir(name).join("_delta_log");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&log)
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
    {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(version) = file
            .strip_suffix(".json")
            .and_then(|v| v.parse::<u64>().ok())
        else {
            continue;
        };
        let text = std::fs::read_to_string(entry.path()).unwrap_or_else(|e| panic!("{e}"));
        let info = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|a| a.get("commitInfo").filter(|c| c.is_object()).cloned());
        out.push((version, info));
    }
    out.sort_by_key(|e| std::cmp::Reverse(e.0));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_is_every_commit_newest_first() {
    for name in [
        "golden__basic-with-inserts-updates",
        "deltars__checkpoints",
        "deltars__checkpoints_vacuumed",
        "dat__basic_append",
        "golden__dv-partitioned-with-checkpoint",
    ] {
        let table = DeltaTableBuilder::new(common::table_dir(name).to_string_lossy())
            .load_table()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let history = table.history(None).await.unwrap_or_else(|e| panic!("{e}"));
        let expected: Vec<(u64, Option<serde_json::Value>)> = commit_infos(name)
            .into_iter()
            .filter(|(v, _)| *v <= table.version())
            .collect();
        // Down to the oldest commit left, with no gap.
        let versions: Vec<u64> = history.iter().map(|e| e.version).collect();
        let newest_run: Vec<u64> = expected
            .iter()
            .map(|(v, _)| *v)
            .enumerate()
            .take_while(|(i, v)| *v == table.version() - *i as u64)
            .map(|(_, v)| v)
            .collect();
        assert_eq!(versions, newest_run, "{name}");
        for (entry, (_, info)) in history.iter().zip(&expected) {
            let info = info.as_ref().and_then(|i| i.as_object()).cloned();
            assert_eq!(entry.commit_info, info, "{name} v{}", entry.version);
            let operation = info
                .as_ref()
                .and_then(|i| i.get("operation"))
                .and_then(|o| o.as_str());
            assert_eq!(entry.operation.as_deref(), operation, "{name}");
        }
        let two = table
            .history(Some(2))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            two,
            history.iter().take(2).cloned().collect::<Vec<_>>(),
            "{name}"
        );
    }
    // A table opened at an older version has the history up to it.
    let old = DeltaTableBuilder::new(common::table_dir("dat__basic_append").to_string_lossy())
        .with_version(0)
        .load_table()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let history = old.history(None).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        history.iter().map(|e| e.version).collect::<Vec<_>>(),
        vec![0]
    );
}

#[test]
fn dar_history_prints_a_grid_and_json() {
    let dir = common::table_dir("deltars__checkpoints_vacuumed");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dar"))
            .arg("history")
            .arg(&dir)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run(&["-n", "0"]);
    assert!(text.contains("| version | timestamp"), "{text}");
    assert!(
        text.contains("older commits were removed by the log's cleanup"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&run(&["-n", "3", "--json"])).unwrap_or_else(|e| panic!("{e}"));
    let entries = json.as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["version"], 12);
    assert_eq!(entries[0]["operation"], "WRITE");
    assert!(entries[0]["commitInfo"].is_object());
}
