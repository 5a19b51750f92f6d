//! `dar view [TABLE|DIR]`: serves the previewer page embedded in this binary (see build.rs)
//! at `/`, with the local table, or the tables in a folder, beside it; prints the URL and
//! opens it in a browser where there is one.
//!
//! A table (a folder with `_delta_log/`) is served at `/NAME/` and the page opens it; a
//! folder of tables is served whole, with a `/tables.json` listing the tables found in it
//! (a file of that name in the folder is not served), so the page offers them.

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
    /// Tables found in a folder, for `/tables.json` (served instead of any file of that
    /// name in the folder: the list is what this command found).
    listing: Vec<String>,
    /// Tables in the folder reached through symlinks out of it, left out of the listing.
    linked_out: usize,
    /// The page's address, relative to the server's root (`/?url=/NAME/`).
    open: String,
}

/// The folder `given` names: a path, or a `file://` URL of one. `dar view` and `dar serve`
/// (`command`) serve local folders; a table at another URL is refused with what to do
/// instead.
pub(super) fn local_path(
    given: &std::path::Path,
    command: &str,
) -> Result<std::path::PathBuf, DeltaError> {
    let Some(text) = given.to_str() else {
        return Ok(given.to_path_buf());
    };
    let Some((scheme, _)) = text.split_once("://") else {
        return Ok(given.to_path_buf());
    };
    if scheme.eq_ignore_ascii_case("file") {
        return url::Url::parse(text)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .ok_or_else(|| DeltaError::InvalidArgument {
                reason: format!("'{text}' is not a file:// URL of a local folder"),
            });
    }
    let instead = if command == "view" {
        format!(
            "run `dar view` and enter {text} in the page (a table on another site is read \
             when that site allows it), or "
        )
    } else {
        String::new()
    };
    Err(DeltaError::InvalidArgument {
        reason: format!(
            "dar {command} serves local folders, not {scheme}:// tables: {instead}read it \
             with `dar head {text}`"
        ),
    })
}

/// Runs the server until the process is stopped.
pub async fn view(args: &ViewArgs) -> Result<(), DeltaError> {
    // What the command line names is checked first: its errors do not depend on the build.
    let path = match &args.path {
        Some(p) => local_path(p, "view")?,
        None => delta_arrow_reader::fixture::demo_table_dir()?,
    };
    let plan = plan(&path, args.follow_symlinks)?;
    if VIEWER_FILES.is_empty() {
        return Err(DeltaError::Unsupported {
            what: "`dar view` in this build of dar, which has no previewer page: run \
                   scripts/build-viewer, then build dar again (see www/README.md)"
                .into(),
        });
    }
    let mut config = ServeConfig::new(&plan.root)
        .with_index("index.html")
        .with_request_log(args.log)
        .with_follow_symlinks(args.follow_symlinks)
        .with_cross_origin(false)
        .with_checkpoint_hints(true);
    if let Some((name, dir)) = &plan.mount {
        config = config.with_mount(format!("/{name}"), dir);
    }
    for (name, bytes) in VIEWER_FILES {
        config = config.with_memory_file(*name, *bytes, content_type(name));
    }
    if plan.mount.is_none() {
        let tables = &plan.listing;
        let json = serde_json::json!({ "tables": tables }).to_string();
        config = config.with_memory_file("tables.json", json, "application/json");
    }
    let server = start(config, args.port)
        .await
        .map_err(|e| super::serve::cannot_serve(&path, args.port, &e))?;
    let url = format!("{}{}", server.url(), plan.open);
    let mut text = format!(
        "Previewing {} at {url}\n(Ctrl-C stops the server)\n",
        path.display()
    );
    if plan.linked_out > 0 {
        text.push_str(&format!(
            "{} table(s) reached through symlinks out of the folder left out (--follow-symlinks \
             serves them).\n",
            plan.linked_out
        ));
    }
    if !args.no_browser {
        match open_browser(&url) {
            // The browser command was started; whether it showed the page is not known.
            Ok(()) => text.push_str("Asked the browser to open it.\n"),
            Err(why) => text.push_str(&format!(
                "No browser opened ({why}); open the address above yourself.\n"
            )),
        }
    }
    // The server serves on whether or not anyone reads this (a closed pipe, a full disk).
    let _ = super::terminal::print_text(&text);
    server
        .wait()
        .await
        .map_err(|e| super::serve::cannot_serve(&path, None, &e))
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
fn plan(path: &Path, follow_symlinks: bool) -> Result<Plan, DeltaError> {
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
            open: open_address(&name),
            mount: Some((name, dir)),
            listing: Vec::new(),
            linked_out: 0,
        });
    }
    let (tables, linked) = tables_in(&dir, follow_symlinks);
    if tables.is_empty() {
        let why = if linked > 0 {
            format!(
                "{linked} reached through symlinks out of the folder, which are served only \
                 with --follow-symlinks"
            )
        } else {
            "nor in its subfolders or theirs: a table is a folder with _delta_log/".into()
        };
        return Err(DeltaError::NotATable {
            location: format!("{} ({why})", path.display()),
        });
    }
    let open = match tables.as_slice() {
        [only] => open_address(only),
        _ => "/".to_string(),
    };
    Ok(Plan {
        root: dir,
        mount: None,
        listing: tables,
        linked_out: linked,
        open,
    })
}

/// The tables in `dir`: its subfolders with `_delta_log/`, and theirs one level down, as
/// URL paths relative to `dir`, sorted; and how many more were left out because a symlink
/// leads out of `dir` to them (the server would refuse them without `follow_symlinks`).
fn tables_in(dir: &Path, follow_symlinks: bool) -> (Vec<String>, usize) {
    let mut found = Vec::new();
    let mut linked = 0;
    let mut take = |path: &Path, url: String| {
        let inside = std::fs::canonicalize(path).is_ok_and(|real| real.starts_with(dir));
        if follow_symlinks || inside {
            found.push(url);
        } else {
            linked += 1;
        }
    };
    for (child, name) in subfolders(dir) {
        if child.join("_delta_log").is_dir() {
            take(&child, url_segment(Some(&name)));
            continue;
        }
        for (grandchild, inner) in subfolders(&child) {
            if grandchild.join("_delta_log").is_dir() {
                let url = format!("{}/{}", url_segment(Some(&name)), url_segment(Some(&inner)));
                take(&grandchild, url);
            }
        }
    }
    found.sort();
    (found, linked)
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

/// The page's address opening the table at the URL path `/PATH/` (`path` percent-encoded
/// already): the path percent-encoded again as the query's value, because the page decodes
/// the value once before it reads it as a URL (`%20` stays a space's escape, `%23` a `#`'s).
fn open_address(path: &str) -> String {
    let value = format!("/{path}/");
    format!(
        "/?url={}",
        percent_encoding::utf8_percent_encode(&value, QUERY_VALUE)
    )
}

/// What a query value must escape besides a path's: `%` (the path's own escapes), `&`, `+`
/// (a space in a query), `=`.
const QUERY_VALUE: &percent_encoding::AsciiSet =
    &SEGMENT.remove(b'/').add(b'&').add(b'+').add(b'=');

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
        let plan = plan(&t, false).unwrap_or_else(|e| panic!("{e}"));
        let real = std::fs::canonicalize(&t).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.mount, Some(("sales%202024".to_string(), real.clone())));
        // The page decodes the query value once, then reads it as a URL path.
        assert_eq!(plan.open, "/?url=/sales%25202024/");
        assert_eq!(plan.root, real);
        assert!(plan.listing.is_empty());
    }

    #[test]
    fn a_folder_lists_its_tables_one_level_down_too() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        table(&tmp.path().join("b"));
        table(&tmp.path().join("a"));
        table(&tmp.path().join("group/inner"));
        table(&tmp.path().join(".hidden"));
        std::fs::create_dir_all(tmp.path().join("empty")).unwrap_or_else(|e| panic!("{e}"));
        let plan = plan(tmp.path(), false).unwrap_or_else(|e| panic!("{e}"));
        let found = vec!["a".to_string(), "b".into(), "group/inner".into()];
        assert_eq!(plan.listing, found);
        assert_eq!((plan.open.as_str(), plan.mount), ("/", None));
        // A folder's own tables.json does not replace what was found.
        std::fs::write(tmp.path().join("tables.json"), r#"["../../etc"]"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            super::plan(tmp.path(), false).map(|p| p.listing).ok(),
            Some(found)
        );
    }

    #[cfg(unix)]
    #[test]
    fn tables_linked_from_out_of_the_folder_are_listed_only_when_followed() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let served = tmp.path().join("served");
        table(&served.join("real"));
        table(&tmp.path().join("outside/t"));
        std::os::unix::fs::symlink(tmp.path().join("outside/t"), served.join("link"))
            .unwrap_or_else(|e| panic!("{e}"));
        let plan = super::plan(&served, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (plan.listing, plan.linked_out),
            (vec!["real".to_string()], 1)
        );
        let plan = super::plan(&served, true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.listing, vec!["link".to_string(), "real".into()]);
        std::fs::remove_dir_all(served.join("real")).unwrap_or_else(|e| panic!("{e}"));
        let err = super::plan(&served, false).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("--follow-symlinks")));
    }

    #[test]
    fn folder_names_with_url_delimiters_open_the_right_table() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for (name, open) in [
            (
                "a #b?c%d 表",
                "/?url=/a%2520%2523b%253Fc%2525d%2520%25E8%25A1%25A8/",
            ),
            ("x&y+z=w", "/?url=/x%26y%2Bz%3Dw/"),
            ("pct%41", "/?url=/pct%252541/"),
        ] {
            let t = tmp.path().join(name);
            table(&t);
            assert_eq!(
                plan(&t, false).map(|p| p.open).ok().as_deref(),
                Some(open),
                "{name}"
            );
            // The query value, decoded once as the page's URLSearchParams does, is the path
            // the table is mounted at.
            let value = open.trim_start_matches("/?url=");
            let decoded = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
            let mounted = plan(&t, false).ok().and_then(|p| p.mount).map(|m| m.0);
            assert_eq!(
                Some(decoded.trim_matches('/').to_string()),
                mounted,
                "{name}"
            );
        }
    }

    #[test]
    fn a_single_table_in_a_folder_is_opened_and_no_table_is_an_error() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let err = plan(tmp.path(), false).err().map(|e| e.code());
        assert_eq!(err, Some("not_a_table"));
        table(&tmp.path().join("only"));
        assert_eq!(
            plan(tmp.path(), false).map(|p| p.open).ok().as_deref(),
            Some("/?url=/only/")
        );
        let missing = plan(&tmp.path().join("nope"), false)
            .err()
            .map(|e| e.code());
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
