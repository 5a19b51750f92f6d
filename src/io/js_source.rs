//! [`JsSourceStore`]: a table read through a JavaScript byte source (wasm32 only).
//!
//! The source is any JS object with these methods (the npm package builds them for a Node.js
//! folder, a `FileSystemDirectoryHandle` and a picked or dropped folder, and a caller may
//! give their own):
//!
//! - `read(path, start, end)` → `Promise<Uint8Array | ArrayBuffer>`: bytes `start..end` of
//!   the object at `path` (relative to the table root, `/`-separated, the object's own
//!   name: nothing is percent-encoded); `start` and `end` are `undefined` for the whole
//!   object. A missing object rejects with an error whose `code` is `not_found` or `ENOENT`,
//!   or whose `name` is `NotFoundError` (what Node's `fs` and the File System Access API
//!   throw);
//! - `size(path)` → `Promise<number>` (optional): the object's size, used for zero-length
//!   ranges;
//! - `list(prefix)` → `Promise<{ path, size, lastModified? }[]>` (optional): objects whose
//!   path starts with `prefix` (more is fine: this store filters). Without it the log is
//!   found by probing, as over static HTTP.
//!
//! The store keeps the [`RangeRead`] contract whatever the source does: an answer of
//! another length than asked is an error, never data, and listed entries are filtered by
//! prefix and `start_after` here. Paths stay inside the source: a path with a `..` or `.`
//! segment, an empty segment or a leading `/`, or an absolute URI, is refused before the
//! source is asked. Every await point stops at once when the store's `AbortSignal` fires.

use std::fmt;
use std::future::Future;
use std::ops::Range;

use bytes::Bytes;
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::fetch_wait::StoreSignal;
use super::js_text::js_message;
use super::RangeRead;
use super::{check_range_len, check_range_order, past_end, phase_for, BoxFuture, ListEntry};
use crate::error::{redact, store_message, DeltaError, Result};

/// A table root reached through a JS byte source; see the module docs.
#[derive(Clone)]
pub struct JsSourceStore {
    source: Object,
    read: Function,
    size: Option<Function>,
    list: Option<Function>,
    /// What the source is, for `Debug` (`node-fs`, `directory-handle`, ...).
    kind: String,
    signal: Option<StoreSignal>,
}

impl fmt::Debug for JsSourceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsSourceStore")
            .field("kind", &self.kind)
            .field("lists", &self.list.is_some())
            .field("has_abort_signal", &self.signal.is_some())
            .finish()
    }
}

impl JsSourceStore {
    /// A store over `source`, which must have a `read` function (`size` and `list` are
    /// optional); `kind` names it in `Debug` output.
    pub fn new(source: &JsValue, kind: &str) -> Result<Self> {
        let invalid = |reason: &str| DeltaError::InvalidArgument {
            reason: format!("the byte source {reason}"),
        };
        let object: Object = source
            .clone()
            .dyn_into()
            .map_err(|_| invalid("must have a read(path, start, end) method"))?;
        let method = |name: &str| -> Result<Option<Function>> {
            let value = Reflect::get(&object, &JsValue::from_str(name))
                .map_err(|_| invalid(&format!("cannot be read (its {name} property throws)")))?;
            if value.is_undefined() || value.is_null() {
                return Ok(None);
            }
            value
                .dyn_into::<Function>()
                .map(Some)
                .map_err(|_| invalid(&format!("has a {name} property that is not a function")))
        };
        let read =
            method("read")?.ok_or_else(|| invalid("must have a read(path, start, end) method"))?;
        Ok(JsSourceStore {
            size: method("size")?,
            list: method("list")?,
            read,
            source: object,
            kind: kind.to_string(),
            signal: None,
        })
    }

    /// The same store, whose calls stop as soon as `signal` fires (or fail at once if it
    /// already has) with [`DeltaError::Aborted`]. `None` removes the signal.
    pub fn with_abort_signal(mut self, signal: Option<AbortSignal>) -> Self {
        self.signal = signal.map(StoreSignal::new);
        self
    }

    /// Calls `method` with `args` and waits for its promise (or value).
    async fn call(&self, path: &str, method: &Function, args: &Array) -> Result<JsValue> {
        let returned = method
            .apply(&self.source, args)
            .map_err(|e| source_error(path, &e))?;
        let settled = JsFuture::from(Promise::resolve(&returned));
        self.unless_aborted(path, settled)
            .await?
            .map_err(|e| source_error(path, &e))
    }

    /// `work`'s output, or [`DeltaError::Aborted`] as soon as the store's signal fires (then
    /// `work` is dropped, which aborts a request in it).
    async fn unless_aborted<T>(&self, path: &str, work: impl Future<Output = T>) -> Result<T> {
        match &self.signal {
            Some(signal) => signal.unless_aborted(path, work).await,
            None => Ok(work.await),
        }
    }

    /// `read(path, start, end)` (whole object when `range` is `None`), as bytes.
    async fn read_bytes(&self, path: &str, range: Option<&Range<u64>>) -> Result<Bytes> {
        confined(path)?;
        let args = Array::new();
        args.push(&JsValue::from_str(path));
        if let Some(r) = range {
            args.push(&JsValue::from_f64(r.start as f64));
            args.push(&JsValue::from_f64(r.end as f64));
        }
        let value = self.call(path, &self.read, &args).await?;
        let bytes = if let Some(array) = value.dyn_ref::<Uint8Array>() {
            array.to_vec()
        } else if value.is_instance_of::<js_sys::ArrayBuffer>() {
            Uint8Array::new(&value).to_vec()
        } else {
            return Err(io_error(
                path,
                "the byte source's read() must resolve to a Uint8Array or an ArrayBuffer",
            ));
        };
        Ok(Bytes::from(bytes))
    }

    /// `size(path)`, when the source has it.
    async fn source_size(&self, path: &str) -> Result<Option<u64>> {
        confined(path)?;
        let Some(size) = &self.size else {
            return Ok(None);
        };
        let value = self
            .call(path, size, &Array::of1(&JsValue::from_str(path)))
            .await?;
        whole(&value).map(Some).ok_or_else(|| {
            io_error(
                path,
                "the byte source's size() must resolve to a whole number",
            )
        })
    }
}

impl RangeRead for JsSourceStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        let path = path.to_string();
        Box::pin(async move {
            check_range_order(&redact(&path), &range)?;
            if range.start == range.end {
                return match self.source_size(&path).await? {
                    Some(len) if range.start > len => {
                        Err(past_end(&redact(&path), &range, Some(len)))
                    }
                    Some(_) => Ok(Bytes::new()),
                    // Without size(): a whole read tells whether it exists and how long it is.
                    None => {
                        let len = self.read_bytes(&path, None).await?.len() as u64;
                        if range.start > len {
                            return Err(past_end(&redact(&path), &range, Some(len)));
                        }
                        Ok(Bytes::new())
                    }
                };
            }
            let bytes = self.read_bytes(&path, Some(&range)).await?;
            if (bytes.len() as u64) < range.end - range.start {
                return Err(past_end(&redact(&path), &range, None));
            }
            check_range_len(&redact(&path), &range, &bytes)?;
            Ok(bytes)
        })
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        let path = path.to_string();
        Box::pin(async move { self.read_bytes(&path, None).await })
    }

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        let path = path.to_string();
        Box::pin(async move { self.source_size(&path).await })
    }

    /// Whether the source has a `list` method.
    fn can_list(&self) -> bool {
        self.list.is_some()
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        let prefix = prefix.to_string();
        let start_after = start_after.map(str::to_string);
        Box::pin(async move {
            let Some(list) = &self.list else {
                return Ok(None);
            };
            let value = self
                .call(&prefix, list, &Array::of1(&JsValue::from_str(&prefix)))
                .await?;
            let entries = entries(&prefix, &value)?;
            Ok(Some(
                entries
                    .into_iter()
                    .filter(|e| e.path.starts_with(prefix.as_str()))
                    .filter(|e| start_after.as_deref().is_none_or(|s| e.path.as_str() > s))
                    .collect(),
            ))
        })
    }
}

/// The entries a source's `list()` resolved to: `[{ path, size, lastModified? }]`.
fn entries(prefix: &str, value: &JsValue) -> Result<Vec<ListEntry>> {
    let bad = || {
        io_error(
            prefix,
            "the byte source's list() must resolve to an array of { path, size, lastModified? }",
        )
    };
    if !Array::is_array(value) {
        return Err(bad());
    }
    let array: &Array = value.unchecked_ref();
    let mut out = Vec::with_capacity(array.length() as usize);
    for item in array.iter() {
        let field = |name: &str| Reflect::get(&item, &JsValue::from_str(name)).ok();
        let path = field("path").and_then(|p| p.as_string()).ok_or_else(bad)?;
        let size = field("size").as_ref().and_then(whole).ok_or_else(bad)?;
        let last_modified_ms = field("lastModified")
            .and_then(|v| v.as_f64())
            .filter(|ms| ms.is_finite())
            .map(|ms| ms as i64);
        // A listed path the store would refuse to read is not listed.
        if confined(&path).is_ok() {
            out.push(ListEntry {
                path,
                size,
                last_modified_ms,
            });
        }
    }
    Ok(out)
}

/// Refuses a path that could leave the source's root: `..`, `.` or empty segments, a leading
/// `/` or `\`, a backslash anywhere, or an absolute URI (`scheme:`...).
fn confined(path: &str) -> Result<()> {
    let escapes = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path
            .split('/')
            .any(|segment| segment.is_empty() || segment == "." || segment == "..")
        || path.split_once("://").is_some();
    if escapes {
        return Err(DeltaError::Io {
            path: redact(path),
            message: "the path leaves the table root (absolute, or a '..', '.' or empty \
                      segment)"
                .into(),
            phase: phase_for(path),
            transient: false,
        });
    }
    Ok(())
}

/// A whole, non-negative JS number (at most 2^53).
fn whole(value: &JsValue) -> Option<u64> {
    let n = value.as_f64()?;
    (n.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&n)).then_some(n as u64)
}

/// A rejection of the source: not found (by `code` or `name`), or an I/O error.
fn source_error(path: &str, e: &JsValue) -> DeltaError {
    let text = |key: &str| {
        Reflect::get(e, &JsValue::from_str(key))
            .ok()
            .and_then(|v| v.as_string())
    };
    let code = text("code");
    let name = text("name");
    let missing = matches!(code.as_deref(), Some("not_found" | "ENOENT"))
        || matches!(name.as_deref(), Some("NotFoundError"));
    if missing {
        return DeltaError::NotFound {
            path: redact(path),
            phase: phase_for(path),
        };
    }
    io_error(path, &js_message(e))
}

fn io_error(path: &str, message: &str) -> DeltaError {
    DeltaError::Io {
        path: redact(path),
        message: store_message(message),
        phase: phase_for(path),
        transient: false,
    }
}
