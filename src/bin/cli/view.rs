//! `dar view [TABLE|DIR]`: serves the previewer page embedded in this binary (see build.rs)
//! at `/`, with the local table, or the tables in a folder, beside it; prints the URL and
//! opens it in a browser where there is one.
//!
//! A table (a folder with `_delta_log/`) is served at `/NAME/` and the page opens it; a
//! folder of tables is served whole, with a `/tables.json` listing the tables found in it
//! (unless it has its own), so the page offers them.

use std::path::{Path, PathBuf};

use clap::Args;
use delta_arrow_reader::serve::{ServeConfig, StaticServer};
use delta_arrow_reader::{DeltaError, Phase};

include!(concat!(env!("OUT_DIR"), "/viewer_files.rs"));

/// Arguments of `dar view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// A table, or a folder of tables (default: the built-in demo table).
    pub path: Option<PathBuf>,
    /// Port on 127.0.0.1 (0 picks a free one); when the default 8080 is taken, a free one.
    #[arg(long)]
    pub port: Option<u16>,
    /// Print the URL only; do not open a browser.
    #[arg(long)]
    pub no_browser: bool,
    /// Print one line per request.
    #[arg(long)]
    pub log: bool,
    /// Serve files that symlinks lead to outside the served folder (a folder of links to
    /// tables); refused by default, as by `dar serve`.
    #[arg(long)]
    pub follow_symlinks: bool,
}

/// The port tried when none is given.
const DEFAULT_PORT: u16 = 8080;

/// What `dar view` serves: the page's folder layout and the address it opens.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// Served at `/` (under the page's files).
    root: PathBuf,
    /// A table mounted at `/NAME/`, when one table was given.
    mount: Option<(String, PathBuf)>,
    /// Tables found in a folder, for `/tables.json` (`None`: the folder's own is served).
    listing: Option<Vec<String>>,
    /// The page's address, relative to the server's root (`/?url=/NAME/`).
    open: String,
}

/// Runs the server until the process is stopped.
pub async fn view(args: &ViewArgs) -> Result<(), DeltaError> {
    if VIEWER_FILES.is_empty() {
        return Err(DeltaError::Unsupported {
            what: "`dar view` in this build of dar, which has no previewer page: run \
                   scripts/build-viewer, then build dar again (see www/README.md)"
                .into(),
        });
    }
    let path = match &args.path {
        Some(p) => p.clone(),
        None => delta_arrow_reader::fixture::demo_table_dir()?,
    };
    let plan = plan(&path)?;
    let mut config = ServeConfig::new(&plan.root)
        .with_index("index.html")
        .with_request_log(args.log)
        .with_follow_symlinks(args.follow_symlinks);
    if let Some((name, dir)) = &plan.mount {
        config = config.with_mount(format!("/{name}"), dir);
    }
    for (name, bytes) in VIEWER_FILES {
        config = config.with_memory_file(*name, *bytes, content_type(name));
    }
    if let Some(tables) = &plan.listing {
        let json = serde_json::json!({ "tables": tables }).to_string();
        config = config.with_memory_file("tables.json", json, "application/json");
    }
    let server = start(config, args.port)
        .await
        .map_err(|e| io_error(&path, &e))?;
    let url = format!("{}{}", server.url(), plan.open);
    let mut text = format!(
        "Previewing {} at {url}\n(Ctrl-C stops the server)\n",
        path.display()
    );
    if !args.no_browser {
        match open_browser(&url) {
            Ok(()) => text.push_str("Opened it in the browser.\n"),
            Err(why) => text.push_str(&format!(
                "No browser opened ({why}); open the address above yourself.\n"
            )),
        }
    }
    // The server serves on whether or not anyone reads this (a closed pipe, a full disk).
    let _ = super::terminal::print_text(&text);
    server.wait().await.map_err(|e| io_error(&path, &e))
}

/// Opens `url` in the user's browser. On Linux and the BSDs only with a display (X11 or
/// Wayland) or `$BROWSER` set: on a server over SSH a text browser would take the terminal.
fn open_browser(url: &str) -> Result<(), String> {
    let unix_desktop = cfg!(all(unix, not(target_os = "macos")));
    let has = |var: &str| std::env::var_os(var).is_some_and(|v| !v.is_empty());
    if unix_desktop && !has("DISPLAY") && !has("WAYLAND_DISPLAY") && !has("BROWSER") {
        return Err("no display: neither DISPLAY, WAYLAND_DISPLAY nor BROWSER is set".into());
    }
    webbrowser::open(url).map_err(|e| e.to_string())
}

/// Binds the port asked for; without one, 8080, else any free port.
async fn start(config: ServeConfig, port: Option<u16>) -> std::io::Result<StaticServer> {
    match port {
        Some(port) => StaticServer::start(config.with_port(port)).await,
        None => match StaticServer::start(config.clone().with_port(DEFAULT_PORT)).await {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                StaticServer::start(config.with_port(0)).await
            }
            other => other,
        },
    }
}

/// What to serve for `path`: one table, or a folder with tables in it.
fn plan(path: &Path) -> Result<Plan, DeltaError> {
    let dir = std::fs::canonicalize(path).map_err(|_| DeltaError::NotFound {
        path: path.display().to_string(),
        phase: Phase::Load,
    })?;
    if !dir.is_dir() {
        return Err(DeltaError::NotATable {
            location: path.display().to_string(),
        });
    }
    if dir.join("_delta_log").is_dir() {
        let name = url_segment(dir.file_name().map(|n| n.to_string_lossy()).as_deref());
        return Ok(Plan {
            root: dir.clone(),
            open: format!("/?url=/{name}/"),
            mount: Some((name, dir)),
            listing: None,
        });
    }
    let tables = tables_in(&dir);
    if tables.is_empty() {
        return Err(DeltaError::NotATable {
            location: format!(
                "{} (nor in its subfolders: a table is a folder with _delta_log/)",
                path.display()
            ),
        });
    }
    let open = match tables.as_slice() {
        [only] => format!("/?url=/{only}/"),
        _ => "/".to_string(),
    };
    let listing = (!dir.join("tables.json").is_file()).then_some(tables);
    Ok(Plan {
        root: dir,
        mount: None,
        listing,
        open,
    })
}

/// The tables in `dir`: its subfolders with `_delta_log/`, and theirs one level down, as
/// URL paths relative to `dir`, sorted.
fn tables_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (child, name) in subfolders(dir) {
        if child.join("_delta_log").is_dir() {
            found.push(url_segment(Some(&name)));
            continue;
        }
        for (grandchild, inner) in subfolders(&child) {
            if grandchild.join("_delta_log").is_dir() {
                found.push(format!(
                    "{}/{}",
                    url_segment(Some(&name)),
                    url_segment(Some(&inner))
                ));
            }
        }
    }
    found.sort();
    found
}

/// The folders directly in `dir` (hidden ones left out), with their names.
fn subfolders(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (!name.starts_with('.') && name != "_delta_log").then(|| (e.path(), name))
        })
        .collect()
}

/// A folder name as one URL path segment (percent-encoded; `table` if it has none).
fn url_segment(name: Option<&str>) -> String {
    let name = name.filter(|n| !n.is_empty()).unwrap_or("table");
    percent_encoding::utf8_percent_encode(name, SEGMENT).to_string()
}

/// What a path segment must escape: controls, space and URL delimiters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'?')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|');

/// The `Content-Type` of an embedded file, by its extension.
pub fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> DeltaError {
    DeltaError::Io {
        path: path.display().to_string(),
        message: format!("cannot serve: {e}"),
        phase: Phase::Load,
        transient: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(dir: &Path) {
        std::fs::create_dir_all(dir.join("_delta_log")).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn one_table_is_mounted_under_its_name_and_opened() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let t = tmp.path().join("sales 2024");
        table(&t);
        let plan = plan(&t).unwrap_or_else(|e| panic!("{e}"));
        let real = std::fs::canonicalize(&t).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.mount, Some(("sales%202024".to_string(), real.clone())));
        assert_eq!(plan.open, "/?url=/sales%202024/");
        assert_eq!(plan.root, real);
        assert_eq!(plan.listing, None);
    }

    #[test]
    fn a_folder_lists_its_tables_one_level_down_too() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        table(&tmp.path().join("b"));
        table(&tmp.path().join("a"));
        table(&tmp.path().join("group/inner"));
        table(&tmp.path().join(".hidden"));
        std::fs::create_dir_all(tmp.path().join("empty")).unwrap_or_else(|e| panic!("{e}"));
        let plan = plan(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            plan.listing,
            Some(vec!["a".to_string(), "b".into(), "group/inner".into()])
        );
        assert_eq!((plan.open.as_str(), plan.mount), ("/", None));
        // A folder's own tables.json is served instead of ours.
        std::fs::write(tmp.path().join("tables.json"), "[]").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan_listing(tmp.path()), None);
    }

    fn plan_listing(dir: &Path) -> Option<Vec<String>> {
        plan(dir).unwrap_or_else(|e| panic!("{e}")).listing
    }

    #[test]
    fn a_single_table_in_a_folder_is_opened_and_no_table_is_an_error() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let err = plan(tmp.path()).err().map(|e| e.code());
        assert_eq!(err, Some("not_a_table"));
        table(&tmp.path().join("only"));
        assert_eq!(
            plan(tmp.path()).map(|p| p.open).ok().as_deref(),
            Some("/?url=/only/")
        );
        let missing = plan(&tmp.path().join("nope")).err().map(|e| e.code());
        assert_eq!(missing, Some("not_found"));
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("viewer.js"), "text/javascript; charset=utf-8");
        assert_eq!(
            content_type("delta_arrow_reader_bg.wasm"),
            "application/wasm"
        );
        assert_eq!(content_type("MANIFEST"), "application/octet-stream");
    }
}
