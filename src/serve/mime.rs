//! Content types by file extension.
//!
//! A short fixed table: what a browser needs to run the demo page (`.html`, `.js`, `.mjs`,
//! `.wasm`, `.css`, `.json`) and what a Delta table holds (`.parquet`, `.json`, `.crc`,
//! `.bin` deletion vectors). Anything else is `application/octet-stream`.

use std::path::Path;

/// The `Content-Type` for a file, chosen by its extension (case-insensitive).
pub(crate) fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" | "cjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "json" | "map" | "crc" => "application/json",
        "css" => "text/css; charset=utf-8",
        "txt" | "md" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "ts" => "text/plain; charset=utf-8",
        // .parquet, .bin, .checkpoint, … and unknown extensions.
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_extensions() {
        assert_eq!(
            content_type(Path::new("www/index.html")),
            "text/html; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("pkg/dar.js")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("pkg/dar.mjs")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("pkg/dar_bg.WASM")),
            "application/wasm"
        );
        assert_eq!(
            content_type(Path::new("_delta_log/00000000000000000000.json")),
            "application/json"
        );
        assert_eq!(content_type(Path::new("a.css")), "text/css; charset=utf-8");
        assert_eq!(
            content_type(Path::new("part-0000.snappy.parquet")),
            "application/octet-stream"
        );
    }

    #[test]
    fn unknown_or_missing_extension() {
        assert_eq!(
            content_type(Path::new("LICENSE")),
            "application/octet-stream"
        );
        assert_eq!(
            content_type(Path::new("x.weird")),
            "application/octet-stream"
        );
    }
}
