//! Paths the log names, confined to the table: `add.path` (and an absolute deletion vector
//! path, and a checkpoint sidecar's path) is a percent-encoded path relative to the table
//! root, or an absolute URI. Stores take decoded paths relative to the root, so every path
//! is resolved here, once, and refused with [`DeltaError::PathOutsideTable`] when it would
//! leave the root: an absolute URI of another location, scheme or origin, or a `..` segment
//! (a store joining `a/../../x` to an HTTP root would climb out of the table, and a browser
//! would follow it to any path of the origin). Pure: the root comes in as a URL.

use percent_encoding::percent_decode_str;

use crate::error::{redact, DeltaError, Phase, Result};
use url::Url;

/// The store path (relative to the table root `root`) of a data file named `path` in the
/// log, resolved in `phase`.
pub fn data_file_path(root: &Url, path: &str, phase: Phase) -> Result<String> {
    let relative = if is_absolute_uri(path) {
        within_root(root, path)
            .ok_or_else(|| outside(path, "an absolute URI of another location", phase))?
    } else {
        path.trim_start_matches('/')
    };
    let decoded = decode(path, relative)?;
    confined(path, decoded, phase)
}

/// Whether `path` starts with a URI scheme (`s3:`, `file:`, `https:`; one letter is a
/// Windows drive, not a scheme).
fn is_absolute_uri(path: &str) -> bool {
    path.split_once(':').is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// The part of the absolute URI `path` under `root` (query strings of the root ignored).
fn within_root<'p>(root: &Url, path: &'p str) -> Option<&'p str> {
    let root = root.as_str();
    let root = root.split('?').next().unwrap_or(root);
    path.strip_prefix(root)
        .or_else(|| {
            // `file:/x` and `file:///x` name the same place.
            let alt = root.replacen(":///", ":/", 1);
            path.strip_prefix(alt.as_str())
        })
        .or_else(|| within_cloud_root(root, path))
}

/// [`within_root`] for cloud URIs that name the same object in another form: Spark writes
/// `abfss://container@account.dfs.core.windows.net/…` into tables that are opened as
/// `az://container/…`, `s3a://` for `s3://`, and so on. Two forms that both name an Azure
/// account must name the same one.
fn within_cloud_root<'p>(root: &str, path: &'p str) -> Option<&'p str> {
    let (root_form, root_account) = cloud_form(root)?;
    let (path_form, path_account) = cloud_form(path)?;
    if let (Some(a), Some(b)) = (&root_account, &path_account) {
        if a != b {
            return None;
        }
    }
    let under = path_form.strip_prefix(root_form.as_str())?;
    // The forms differ only before the object's path: `under` ends `path`.
    path.get(path.len() - under.len()..)
}

/// One form of a cloud URI (`s3://bucket/key`, `gs://bucket/key`, `azure://container/path`)
/// and the Azure account it names, if any; `None` for other schemes.
fn cloud_form(uri: &str) -> Option<(String, Option<String>)> {
    let (scheme, rest) = uri.split_once("://")?;
    match scheme.to_ascii_lowercase().as_str() {
        "s3" | "s3a" => Some((format!("s3://{rest}"), None)),
        "gs" | "gcs" => Some((format!("gs://{rest}"), None)),
        "az" | "azure" | "adl" | "abfs" | "abfss" | "wasb" | "wasbs" => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let (container, account) = match authority.split_once('@') {
                Some((container, host)) => (
                    container,
                    host.split('.').next().map(str::to_ascii_lowercase),
                ),
                None => (authority, None),
            };
            Some((format!("azure://{container}/{path}"), account))
        }
        _ => None,
    }
}

/// `decoded` (a store path relative to the root) if none of its segments climbs out of the
/// root. Backslashes count as separators: URL parsers treat them as `/` in `http(s)` URLs.
fn confined(named: &str, decoded: String, phase: Phase) -> Result<String> {
    if decoded.split(['/', '\\']).any(|segment| segment == "..") {
        return Err(outside(named, "a '..' segment", phase));
    }
    if decoded.contains('\0') {
        return Err(DeltaError::invalid_log(
            redact(named),
            "the path holds a NUL character",
        ));
    }
    Ok(decoded)
}

fn outside(path: &str, reason: &'static str, phase: Phase) -> DeltaError {
    DeltaError::PathOutsideTable {
        path: redact(path),
        reason,
        phase,
    }
}

fn decode(named: &str, path: &str) -> Result<String> {
    percent_decode_str(path)
        .decode_utf8()
        .map(|p| p.into_owned())
        .map_err(|_| {
            DeltaError::invalid_log(
                redact(named),
                "the data file path is not valid percent-encoded UTF-8",
            )
        })
}

/// The store path of a v2 checkpoint sidecar named `sidecar` in a `sidecar` action of the
/// table at `root`: a file name (or relative path) under `_delta_log/_sidecars/`, or an
/// absolute URI inside the table (refused when the root is not known as a URL).
pub fn sidecar_path(root: Option<&Url>, sidecar: &str) -> Result<String> {
    if is_absolute_uri(sidecar) {
        return match root {
            Some(root) => data_file_path(root, sidecar, Phase::Load),
            None => Err(outside(
                sidecar,
                "an absolute URI of another location",
                Phase::Load,
            )),
        };
    }
    let decoded = decode(sidecar, sidecar.trim_start_matches('/'))?;
    let decoded = confined(sidecar, decoded, Phase::Load)?;
    Ok(format!("{}_sidecars/{decoded}", super::path::LOG_DIR))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> Url {
        Url::parse("file:///t/x/").unwrap_or_else(|e| panic!("{e}"))
    }

    fn code(r: Result<String>) -> &'static str {
        r.err().map_or("ok", |e| e.code())
    }

    #[test]
    fn cloud_uris_in_another_form_are_inside_the_table() {
        let at = |root: &str, path: &str| {
            let root = Url::parse(root).unwrap_or_else(|e| panic!("{e}"));
            data_file_path(&root, path, Phase::Plan).map_err(|e| e.code())
        };
        let spark = "abfss://c@acct.dfs.core.windows.net/t/p%3D1/part.parquet";
        for root in [
            "az://c/t/",
            "azure://c/t/",
            "abfs://c/t/",
            "abfss://c@acct.dfs.core.windows.net/t/",
            "wasbs://c@ACCT.blob.core.windows.net/t/",
        ] {
            assert_eq!(at(root, spark).as_deref(), Ok("p=1/part.parquet"), "{root}");
        }
        assert_eq!(
            at("s3://b/t/", "s3a://b/t/x.parquet").as_deref(),
            Ok("x.parquet")
        );
        assert_eq!(
            at("gcs://b/t/", "gs://b/t/x.parquet").as_deref(),
            Ok("x.parquet")
        );
        // Another account, container, bucket or table; another cloud.
        for (root, path) in [
            ("abfss://c@other.dfs.core.windows.net/t/", spark),
            ("az://d/t/", spark),
            ("az://c/u/", spark),
            ("s3://b/t/", "s3a://b2/t/x.parquet"),
            ("gs://b/t/", "s3://b/t/x.parquet"),
            ("az://c/t/", "gs://c/t/x.parquet"),
            (
                "az://c/t/",
                "abfss://c@acct.dfs.core.windows.net/t/../u/x.parquet",
            ),
        ] {
            assert_eq!(at(root, path), Err("path_outside_table"), "{root} {path}");
        }
    }

    #[test]
    fn decodes_relative_and_absolute_paths() {
        let loc = root();
        let p = |s: &str| data_file_path(&loc, s, Phase::Plan).ok();
        assert_eq!(p("a%20b/c%3D1.parquet").as_deref(), Some("a b/c=1.parquet"));
        assert_eq!(
            p("file:///t/x/part.parquet").as_deref(),
            Some("part.parquet")
        );
        assert_eq!(p("file:/t/x/p%25.parquet").as_deref(), Some("p%.parquet"));
        // `..` inside a name is a name, not a segment.
        assert_eq!(p("a..b/..c.parquet").as_deref(), Some("a..b/..c.parquet"));
    }

    #[test]
    fn refuses_every_way_out_of_the_root() {
        let loc = root();
        for path in [
            "s3://other/part.parquet",
            "file:///t/y/part.parquet",
            "file:///t/x-other/part.parquet",
            "https://evil.example/t/x/part.parquet",
            "../part.parquet",
            "a/../../part.parquet",
            "a/%2E%2E/%2e%2e/part.parquet",
            "a%2F..%2F..%2Fpart.parquet",
            "a\\..\\..\\part.parquet",
            "a%5C..%5Cpart.parquet",
            "file:///t/x/../y/part.parquet",
            "file:///t/x/a/%2e%2e/%2e%2e/y.parquet",
        ] {
            let r = data_file_path(&loc, path, Phase::Plan);
            assert_eq!(code(r), "path_outside_table", "{path}");
        }
        let e = data_file_path(&loc, "s3://k:secret@b/p?sig=1", Phase::Read).err();
        let text = e.map(|e| (e.to_string(), e.phase()));
        assert_eq!(
            text,
            Some((
                "path outside the table: s3://b/p: an absolute URI of another location".into(),
                Phase::Read
            ))
        );
        assert_eq!(
            code(data_file_path(&loc, "a%00.parquet", Phase::Plan)),
            "invalid_log"
        );
        assert_eq!(
            code(data_file_path(&loc, "a%FF.parquet", Phase::Plan)),
            "invalid_log"
        );
    }

    #[test]
    fn sidecars_stay_in_the_table() {
        let loc = root();
        let s = |p: &str| sidecar_path(Some(&loc), p);
        assert_eq!(
            s("a.parquet").ok().as_deref(),
            Some("_delta_log/_sidecars/a.parquet")
        );
        assert_eq!(
            s("file:///t/x/_delta_log/_sidecars/b.parquet")
                .ok()
                .as_deref(),
            Some("_delta_log/_sidecars/b.parquet")
        );
        for bad in [
            "../../00000000000000000001.json",
            "%2E%2E/%2E%2E/x.parquet",
            "s3://other/_delta_log/_sidecars/a.parquet",
            "file:///etc/passwd",
        ] {
            assert_eq!(code(s(bad)), "path_outside_table", "{bad}");
        }
        let unknown_root = sidecar_path(None, "file:///t/x/_delta_log/_sidecars/b.parquet");
        assert_eq!(code(unknown_root), "path_outside_table");
    }
}
