//! The layer map of `src/`, enforced: data flows `io → log → plan → read → front ends`.
//!
//! Every library source file is parsed (with `syn`, so comments, strings and doc links do
//! not count) and every path it names is resolved to the top-level module it reaches:
//! `crate::x::…`, `super::…` (relative to the file's module), and `use` trees. A module may
//! only reach the modules its layer lists in [`allowed`]; the pure layers (`schema`, `log`,
//! `predicate`, `plan`) also may not name crates or `std` modules that do I/O, spawn, block
//! or read a clock, and may not contain `async` code. Test code (`#[cfg(test)]` items and
//! the files of `#[cfg(test)]` modules) is exempt: unit tests may build fixtures.
//!
//! Macro bodies are token streams, not parsed paths: a `crate::` path inside `format!(…)`
//! is not seen (rare in practice; clippy's `disallowed_methods` covers calls in them).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The top-level modules each layer may use (besides itself and the crate root), as a
/// space-separated list.
fn allowed(layer: &str) -> Option<Vec<&'static str>> {
    let uses = match layer {
        "error" => "",
        // The bounds on hostile input: checks with no I/O, used by every layer that reads.
        "limits" => "error",
        "schema" => "error limits",
        "io" => "error limits",
        "log" => "error limits schema",
        "predicate" => "error limits schema log",
        "plan" => "error limits schema log predicate",
        "read" => "error limits schema log predicate plan io",
        // Decoders beside ours, behind read's FileDecoder seam.
        "kernel" => "error limits schema log predicate plan io read",
        "api" => "error limits schema log predicate plan io read kernel",
        "datafusion" | "wasm" => "error limits schema log predicate plan io read api",
        // Plans with Delta scans on other processes: the DataFusion adapter's nodes, rebuilt.
        "distributed" => "error limits schema log predicate plan io read api datafusion",
        // Test and tool support: writes tables with the crate's own types and stores.
        "fixture" => "error limits schema log io read",
        // A static file server; it reads log file names (with log's parser) to answer a
        // missing `_last_checkpoint` (`serve::checkpoint_hint`).
        "serve" => "error log",
        // The fuzz targets' entry points: drive parsers and the read path like a front end.
        "fuzzing" => "error limits schema log predicate plan io read api",
        _ => return None,
    };
    Some(uses.split_whitespace().collect())
}

/// The layers that stay free of I/O, async, clocks and spawning.
const PURE: &[&str] = &["limits", "schema", "log", "predicate", "plan"];

/// Paths a pure layer may not name (a prefix of the path's segments).
const IMPURE_PATHS: &[&[&str]] = &[
    &["tokio"],
    &["object_store"],
    &["reqwest"],
    &["hyper"],
    &["wasm_bindgen"],
    &["wasm_bindgen_futures"],
    &["js_sys"],
    &["web_sys"],
    &["web_time"],
    &["std", "fs"],
    &["std", "net"],
    &["std", "thread"],
    &["std", "process"],
    &["std", "env"],
    &["std", "time", "Instant"],
    &["std", "time", "SystemTime"],
    &["futures", "executor"],
];

/// A forbidden reach found in the source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Violation {
    file: String,
    line: usize,
    what: String,
}

/// The module path of a source file: `src/log/loader.rs` → `["log", "loader"]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_string();
        if stem != "mod" && stem != "lib" {
            parts.push(stem);
        }
    }
    parts
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let text = a
                .meta
                .require_list()
                .map(|l| l.tokens.to_string())
                .unwrap_or_default();
            // `cfg(test)`, `cfg(all(test, …))`; not `cfg(not(test))`.
            text.split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == "test")
                && !text.contains("not (test")
                && !text.contains("not(test")
        }
    })
}

struct Checker<'a> {
    file: String,
    /// The module the visitor is in (the file's module plus inline `mod`s).
    module: Vec<String>,
    layer: String,
    /// The source file being checked.
    path: PathBuf,
    /// Files of `#[cfg(test)] mod x;` declarations found (test code, not checked).
    test_files: &'a mut BTreeSet<PathBuf>,
    violations: Vec<Violation>,
}

impl Checker<'_> {
    fn report(&mut self, span: proc_macro2::Span, what: String) {
        self.violations.push(Violation {
            file: self.file.clone(),
            line: span.start().line,
            what,
        });
    }

    /// Checks one path given as its segments (`crate`, `super`, `self` resolved here).
    fn check_segments(&mut self, segments: &[String], span: proc_macro2::Span) {
        let Some(first) = segments.first() else {
            return;
        };
        let target = match first.as_str() {
            "crate" => segments.get(1).cloned(),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let mut base = self.module.clone();
                for _ in 0..ups {
                    base.pop();
                }
                base.first().cloned().or_else(|| segments.get(ups).cloned())
            }
            _ => None,
        };
        if let Some(target) = target {
            if target != self.layer && allowed(&target).is_some() {
                let ok = allowed(&self.layer).is_none_or(|a| a.contains(&target.as_str()));
                if !ok {
                    self.report(span, format!("{} uses {target}", self.layer));
                }
            }
        }
        if PURE.contains(&self.layer.as_str()) {
            for bad in IMPURE_PATHS {
                if segments.len() >= bad.len()
                    && segments.iter().zip(bad.iter()).all(|(a, b)| a == b)
                {
                    self.report(
                        span,
                        format!("the pure layer {} names {}", self.layer, bad.join("::")),
                    );
                }
            }
        }
    }

    fn check_use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.check_use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.check_segments(&prefix.clone(), n.ident.span());
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.check_segments(&prefix.clone(), r.ident.span());
                prefix.pop();
            }
            syn::UseTree::Glob(g) => {
                self.check_segments(&prefix.clone(), g.star_token.spans[0]);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.check_use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Type(t) => &t.attrs,
            syn::Item::Macro(m) => &m.attrs,
            _ => &[],
        };
        if is_cfg_test(attrs) {
            if let syn::Item::Mod(m) = item {
                if m.content.is_none() {
                    self.test_files.extend(module_files(&self.path, m));
                }
            }
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        self.check_use_tree(&mut prefix, &u.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let span = path
            .segments
            .first()
            .map(|s| s.ident.span())
            .unwrap_or_else(proc_macro2::Span::call_site);
        self.check_segments(&segments, span);
        syn::visit::visit_path(self, path);
    }

    fn visit_signature(&mut self, sig: &'ast syn::Signature) {
        if PURE.contains(&self.layer.as_str()) {
            if let Some(a) = &sig.asyncness {
                self.report(
                    a.span,
                    format!("async fn {} in the pure layer {}", sig.ident, self.layer),
                );
            }
        }
        syn::visit::visit_signature(self, sig);
    }

    fn visit_expr_async(&mut self, e: &'ast syn::ExprAsync) {
        if PURE.contains(&self.layer.as_str()) {
            self.report(
                e.async_token.span,
                format!("an async block in the pure layer {}", self.layer),
            );
        }
        syn::visit::visit_expr_async(self, e);
    }

    fn visit_expr_await(&mut self, e: &'ast syn::ExprAwait) {
        if PURE.contains(&self.layer.as_str()) {
            self.report(
                e.await_token.span,
                format!(".await in the pure layer {}", self.layer),
            );
        }
        syn::visit::visit_expr_await(self, e);
    }
}

/// The files `mod x;` (declared in `file`) may live in.
fn module_files(file: &Path, m: &syn::ItemMod) -> Vec<PathBuf> {
    let dir = file.parent().unwrap_or(file);
    let explicit = m.attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    });
    if let Some(p) = explicit {
        return vec![dir.join(p)];
    }
    let name = m.ident.to_string();
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
    let base = match stem.as_deref() {
        Some("mod") | Some("lib") => dir.to_path_buf(),
        Some(stem) => dir.join(stem),
        None => dir.to_path_buf(),
    };
    vec![
        base.join(format!("{name}.rs")),
        base.join(name).join("mod.rs"),
    ]
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Checks every library file under `src` (not `src/bin`, a separate crate).
fn check_tree(src: &Path) -> Vec<Violation> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|f| !f.starts_with(src.join("bin")));
    files.sort();
    let parsed: Vec<(PathBuf, syn::File)> = files
        .into_iter()
        .map(|file| {
            let text =
                fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            (file, ast)
        })
        .collect();
    // Two passes: the files of `#[cfg(test)] mod x;` first (a `#[path]` may name any file),
    // then every other file.
    let mut test_files = BTreeSet::new();
    let mut violations = Vec::new();
    for pass in 0..2 {
        for (file, ast) in &parsed {
            if is_cfg_test(&ast.attrs) || test_files.contains(file) {
                continue;
            }
            let module = module_path(src, file);
            let mut found = BTreeSet::new();
            let mut checker = Checker {
                file: file.strip_prefix(src).unwrap_or(file).display().to_string(),
                layer: module.first().cloned().unwrap_or_default(),
                module,
                path: file.clone(),
                test_files: &mut found,
                violations: Vec::new(),
            };
            checker.visit_file(ast);
            let found_violations = std::mem::take(&mut checker.violations);
            if pass == 0 {
                test_files.extend(found);
            } else {
                violations.extend(found_violations);
            }
        }
    }
    violations.sort();
    violations.dedup();
    violations
}

#[test]
fn the_library_keeps_its_layer_map() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let violations = check_tree(&src);
    let report: Vec<String> = violations
        .iter()
        .map(|v| format!("src/{}:{}: {}", v.file, v.line, v.what))
        .collect();
    assert!(report.is_empty(), "forbidden edges:\n{}", report.join("\n"));
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut unknown = Vec::new();
    for entry in fs::read_dir(&src).unwrap_or_else(|e| panic!("{e}")) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "lib" || name == "bin" {
            continue;
        }
        if allowed(&name).is_none() {
            unknown.push(name);
        }
    }
    assert!(
        unknown.is_empty(),
        "modules without a layer in tests/architecture.rs: {unknown:?}"
    );
}

/// The checker itself: a scratch tree with one edge of each forbidden kind, and allowed ones.
#[test]
fn the_checker_finds_forbidden_edges() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let path = src.join(rel);
        fs::create_dir_all(path.parent().unwrap_or(src)).unwrap_or_else(|e| panic!("{e}"));
        fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    };
    write(
        "lib.rs",
        "pub mod log; pub mod plan; pub mod read; pub mod io;",
    );
    write(
        "log/mod.rs",
        "mod inner;\n#[cfg(test)]\nmod tests;\nuse crate::schema::X;\nuse crate::io::ListEntry;\n",
    );
    write(
        "log/inner.rs",
        "pub fn f() { let _ = super::super::read::g(); }\npub async fn h() {}\nfn t() { std::time::Instant::now(); }\n",
    );
    write(
        "log/tests.rs",
        "use crate::io::Anything;\nuse crate::read::x;\n",
    );
    write(
        "plan/mod.rs",
        "use crate::{log::Add, read::{FileTask, x}};\n#[cfg(test)]\nmod t { use crate::read::y; }\nfn ok() { crate::predicate::f(); }\n",
    );
    write(
        "read/mod.rs",
        "use crate::plan::FileTask;\nuse crate::io::Store;\nasync fn fine() {}\n",
    );
    let found: Vec<(String, usize, String)> = check_tree(src)
        .into_iter()
        .map(|v| (v.file, v.line, v.what))
        .collect();
    let expected = vec![
        ("log/inner.rs".to_string(), 1, "log uses read".to_string()),
        (
            "log/inner.rs".to_string(),
            2,
            "async fn h in the pure layer log".to_string(),
        ),
        (
            "log/inner.rs".to_string(),
            3,
            "the pure layer log names std::time::Instant".to_string(),
        ),
        ("log/mod.rs".to_string(), 5, "log uses io".to_string()),
        ("plan/mod.rs".to_string(), 1, "plan uses read".to_string()),
    ];
    assert_eq!(found, expected);
}
