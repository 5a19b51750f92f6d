#![cfg(not(target_arch = "wasm32"))]
mod common;
mod rows;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore_schemas() {
    let root = common::corpus_dir().join("expected");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in names {
        for case in rows::cases_of(&root, &n).unwrap() {
            let exp = case.read_expected().unwrap();
            let mut b = delta_arrow_reader::DeltaTableBuilder::new(
                common::table_dir(&n).to_string_lossy().into_owned(),
            );
            if let Some(v) = case.version {
                b = b.with_version(v);
            }
            let t = match b.load_table().await {
                Ok(t) => t,
                Err(e) => {
                    println!("{}: LOAD ERROR {e}", case.label());
                    continue;
                }
            };
            let empty = rows::Rows::from_batches(&t.schema(), &[]).unwrap();
            let cmp = rows::compare(&exp, &empty);
            let probs: Vec<_> = cmp
                .problems
                .iter()
                .filter(|p| !p.starts_with("rows differ"))
                .collect();
            println!(
                "{} v{} latest_meta={:?}: {:?} {:?}",
                case.label(),
                t.version(),
                case.latest_version,
                probs,
                cmp.notes
            );
        }
    }
}
