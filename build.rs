//! Build script: embeds the previewer page (built by `scripts/build-viewer`) into the `dar`
//! binary for `dar view`. Only native builds with the `cli` feature embed it; the wasm32
//! library and builds without `cli` get an empty list and never rerun for the page.
//!
//! The page is the folder `$DAR_VIEWER_DIR`, else `dar-viewer` in the Cargo target folder
//! (where `scripts/build-viewer` writes it). Its `MANIFEST`, written last by the script,
//! names the files to embed; without it `dar view` says how to build the page. Writes
//! `$OUT_DIR/viewer_files.rs`: `VIEWER_FILES: &[(&str, &[u8])]` (name, bytes).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DAR_VIEWER_DIR");
    let Some(out_dir) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let native_cli = env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a != "wasm32")
        && env::var_os("CARGO_FEATURE_CLI").is_some();
    let files = if native_cli {
        viewer_files(&out_dir)
    } else {
        Vec::new()
    };
    let mut code = String::from(
        "/// The previewer's files (name, bytes), embedded at build time (see build.rs).\n\
         pub const VIEWER_FILES: &[(&str, &[u8])] = &[\n",
    );
    for (name, path) in &files {
        let _ = writeln!(
            code,
            "    ({name:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    code.push_str("];\n");
    if let Err(e) = fs::write(out_dir.join("viewer_files.rs"), code) {
        println!("cargo:warning=cannot write viewer_files.rs: {e}");
    }
}

/// The files the viewer's MANIFEST names (each a plain name inside its folder), with the
/// watches that rerun this script when the page is built again.
fn viewer_files(out_dir: &Path) -> Vec<(String, PathBuf)> {
    let dir = match env::var_os("DAR_VIEWER_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => match target_dir(out_dir) {
            Some(target) => {
                let dir = target.join("dar-viewer");
                // Made empty here when the page is not built yet, so that there is a folder
                // to watch which changes only when `scripts/build-viewer` writes the page.
                let _ = fs::create_dir_all(&dir);
                dir
            }
            None => return Vec::new(),
        },
    };
    let manifest = dir.join("MANIFEST");
    let Ok(text) = fs::read_to_string(&manifest) else {
        // Not built (yet): watch the page's folder (Cargo scans a watched folder's whole
        // tree, so watching the target folder instead rebuilt the crate on every build; a
        // missing file would too).
        if dir.is_dir() {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        return Vec::new();
    };
    println!("cargo:rerun-if-changed={}", manifest.display());
    let mut files = Vec::new();
    for name in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let plain = !name.contains(['/', '\\']) && name != "." && name != "..";
        let path = dir.join(name);
        if !plain || !path.is_file() {
            println!("cargo:warning=dar view: {} names {name:?}, which is not a file there; the page is left out", manifest.display());
            return Vec::new();
        }
        println!("cargo:rerun-if-changed={}", path.display());
        files.push((name.to_string(), path));
    }
    files
}

/// The Cargo target folder `out_dir` lies in: the nearest ancestor with Cargo's
/// `CACHEDIR.TAG`.
fn target_dir(out_dir: &Path) -> Option<PathBuf> {
    out_dir
        .ancestors()
        .find(|p| p.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}
