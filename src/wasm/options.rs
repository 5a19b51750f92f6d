//! The option objects of `openTable(url, options)` and `WasmTable.scan(options)`, read from
//! JS values into Rust. Missing, `undefined` and `null` properties mean "not given"; a
//! property of the wrong kind is an `invalid_argument` error that names it.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::AbortSignal;

use crate::error::{DeltaError, Result};
use crate::schema::{BinaryType, OutputTypes, StringType};

/// Which version `openTable` loads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TimeTravel {
    /// The newest version.
    Latest,
    /// Exactly this version.
    Version(u64),
    /// The newest version committed at or before this time (ms since the epoch).
    TimestampMs(i64),
    /// The same, as text (RFC 3339, `YYYY-MM-DD HH:MM:SS` or a date).
    TimestampText(String),
}

/// `{ headers, version, timestamp, signUrl, signal, retries, fetch, requestInit, maxCommits }`.
#[derive(Debug)]
pub(crate) struct OpenOptions {
    /// `requestInit.headers`, then `headers` (so `headers` wins where both set one).
    pub headers: Vec<(String, String)>,
    pub target: TimeTravel,
    pub sign_url: Option<Function>,
    pub signal: Option<AbortSignal>,
    pub retries: Option<u32>,
    /// The caller's `fetch` function.
    pub fetch: Option<Function>,
    /// `requestInit` without its `headers` (moved to `headers`).
    pub request_init: Option<Object>,
    /// The most commits the load replays after its checkpoint (`maxCommits`).
    pub max_commits: Option<u64>,
}

impl OpenOptions {
    /// The options that only an http(s) table uses, by name, when any is given: a byte
    /// source has no requests to put them on.
    pub(crate) fn http_only_given(&self) -> Option<&'static str> {
        if !self.headers.is_empty() {
            Some("headers")
        } else if self.sign_url.is_some() {
            Some("signUrl")
        } else if self.fetch.is_some() {
            Some("fetch")
        } else if self.request_init.is_some() {
            Some("requestInit")
        } else if self.retries.is_some() {
            Some("retries")
        } else {
            None
        }
    }
}

/// The most parts `options.part` may cut a scan into.
pub(crate) const MAX_SCAN_PARTS: u64 = 256;

/// `part: { index, count }`: the scan reads part `index` of `count` disjoint parts of the
/// files it selects (see `WasmScan::start`), so that `count` workers, each opening the same
/// version, read one scan between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanPart {
    pub index: usize,
    pub count: usize,
}

/// `{ columns, filter, limit, batchSize, stringType, binaryType, maxPageBytes, part, signal,
/// onProgress }`.
#[derive(Debug, Default)]
pub(crate) struct ScanOptions {
    /// The largest uncompressed page a data file may declare (`maxPageBytes`).
    pub max_page_bytes: Option<u64>,
    pub columns: Option<Vec<String>>,
    pub filter: Option<String>,
    pub limit: Option<usize>,
    pub batch_size: Option<usize>,
    /// The output types; `Utf8` and `Binary` unless `stringType`/`binaryType` say otherwise
    /// (what every `apache-arrow` version reads).
    pub output_types: OutputTypes,
    /// The part of the scan read here (`part`); `None` reads all of it.
    pub part: Option<ScanPart>,
    pub signal: Option<AbortSignal>,
    pub on_progress: Option<Function>,
}

impl OpenOptions {
    pub(crate) fn from_js(options: &JsValue) -> Result<Self> {
        let version = get(options, "version")?
            .map(|v| whole_number(&v, "version"))
            .transpose()?;
        let timestamp = get(options, "timestamp")?
            .map(|v| timestamp(&v))
            .transpose()?;
        let target = match (version, timestamp) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "give either options.version or options.timestamp, not both",
                ))
            }
            (Some(v), None) => TimeTravel::Version(v),
            (None, Some(t)) => t,
            (None, None) => TimeTravel::Latest,
        };
        let retries = get(options, "retries")?
            .map(|v| whole_number(&v, "retries"))
            .transpose()?
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        let (request_init, mut all_headers) = match get(options, "requestInit")? {
            Some(init) => {
                let (init, headers) = request_init(&init)?;
                (Some(init), headers)
            }
            None => (None, Vec::new()),
        };
        if let Some(given) = get(options, "headers")? {
            all_headers.extend(headers(&given, "headers")?);
        }
        Ok(OpenOptions {
            headers: all_headers,
            fetch: get(options, "fetch")?
                .map(|v| function(v, "fetch"))
                .transpose()?,
            request_init,
            target,
            sign_url: get(options, "signUrl")?
                .map(|v| function(v, "signUrl"))
                .transpose()?,
            signal: signal(options)?,
            retries,
            max_commits: get(options, "maxCommits")?
                .map(|v| whole_number(&v, "maxCommits"))
                .transpose()?,
        })
    }
}

impl ScanOptions {
    pub(crate) fn from_js(options: &JsValue) -> Result<Self> {
        let columns = match get(options, "columns")? {
            None => None,
            Some(v) => {
                let array = v
                    .dyn_into::<Array>()
                    .map_err(|_| invalid("options.columns must be an array of column names"))?;
                let mut names = Vec::with_capacity(array.length() as usize);
                for item in array.iter() {
                    names.push(item.as_string().ok_or_else(|| {
                        invalid("options.columns must be an array of column names")
                    })?);
                }
                Some(names)
            }
        };
        let filter = match get(options, "filter")? {
            None => None,
            Some(v) => {
                let text = v
                    .as_string()
                    .ok_or_else(|| invalid("options.filter must be a string"))?;
                (!text.trim().is_empty()).then_some(text)
            }
        };
        let limit = get(options, "limit")?
            .map(|v| whole_number(&v, "limit").map(saturating_usize))
            .transpose()?;
        let batch_size = get(options, "batchSize")?
            .map(|v| match whole_number(&v, "batchSize") {
                Ok(0) | Err(_) => Err(invalid(
                    "options.batchSize must be a whole number from 1 to 2^53",
                )),
                Ok(n) => Ok(saturating_usize(n)),
            })
            .transpose()?;
        let part = get(options, "part")?.map(|v| scan_part(&v)).transpose()?;
        if part.is_some() && limit.is_some() {
            return Err(invalid("options.part and options.limit cannot be combined"));
        }
        let strings = get(options, "stringType")?
            .map(|v| type_name::<StringType>(&v, "stringType"))
            .transpose()?
            .unwrap_or(StringType::Utf8);
        let binaries = get(options, "binaryType")?
            .map(|v| type_name::<BinaryType>(&v, "binaryType"))
            .transpose()?
            .unwrap_or(BinaryType::Binary);
        Ok(ScanOptions {
            max_page_bytes: get(options, "maxPageBytes")?
                .map(|v| whole_number(&v, "maxPageBytes"))
                .transpose()?,
            columns,
            filter,
            limit,
            batch_size,
            output_types: OutputTypes::new(strings, binaries),
            part,
            signal: signal(options)?,
            on_progress: get(options, "onProgress")?
                .map(|v| function(v, "onProgress"))
                .transpose()?,
        })
    }
}

/// `options.part`: `{ index, count }` with `1 <= count <= MAX_SCAN_PARTS` and
/// `index < count`.
fn scan_part(value: &JsValue) -> Result<ScanPart> {
    let shape = || invalid("options.part must be { index, count }, index < count <= 256");
    if !value.is_object() {
        return Err(shape());
    }
    let field = |key: &str, name: &str| -> Result<u64> {
        let v = Reflect::get(value, &JsValue::from_str(key)).map_err(|_| shape())?;
        if v.is_undefined() || v.is_null() {
            return Err(shape());
        }
        whole_number(&v, name)
    };
    let index = field("index", "part.index")?;
    let count = field("count", "part.count")?;
    if count == 0 || count > MAX_SCAN_PARTS || index >= count {
        return Err(shape());
    }
    Ok(ScanPart {
        index: saturating_usize(index),
        count: saturating_usize(count),
    })
}

fn invalid(reason: impl Into<String>) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: reason.into(),
    }
}

/// `options[key]`, or `None` when the options or the property are `undefined`/`null`.
fn get(options: &JsValue, key: &str) -> Result<Option<JsValue>> {
    if options.is_undefined() || options.is_null() {
        return Ok(None);
    }
    if !options.is_object() {
        return Err(invalid("options must be an object"));
    }
    let value = Reflect::get(options, &JsValue::from_str(key))
        .map_err(|_| invalid(format!("cannot read options.{key}")))?;
    Ok((!value.is_undefined() && !value.is_null()).then_some(value))
}

/// A type name (`"Utf8View"`, `"LargeBinary"`, ...) given as a string.
fn type_name<T: std::str::FromStr<Err = DeltaError>>(value: &JsValue, key: &str) -> Result<T> {
    value
        .as_string()
        .ok_or_else(|| invalid(format!("options.{key} must be a string")))?
        .parse()
}

fn saturating_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A non-negative whole number given as a JS number or BigInt.
fn whole_number(value: &JsValue, key: &str) -> Result<u64> {
    let bad = || {
        invalid(format!(
            "options.{key} must be a whole number from 0 to 2^53"
        ))
    };
    if let Some(n) = value.as_f64() {
        // 2^53: beyond it a JS number is not exact.
        if n.fract() != 0.0 || !(0.0..=9_007_199_254_740_992.0).contains(&n) {
            return Err(bad());
        }
        return Ok(n as u64);
    }
    if value.is_bigint() {
        let text = js_sys::BigInt::from(value.clone())
            .to_string(10)
            .map_err(|_| bad())?;
        return String::from(text).parse().map_err(|_| bad());
    }
    Err(bad())
}

/// `timestamp`: a `Date`, milliseconds since the epoch, or text.
fn timestamp(value: &JsValue) -> Result<TimeTravel> {
    if let Some(date) = value.dyn_ref::<js_sys::Date>() {
        let ms = date.get_time();
        if ms.is_nan() {
            return Err(invalid("options.timestamp is an invalid Date"));
        }
        return Ok(TimeTravel::TimestampMs(ms as i64));
    }
    if let Some(ms) = value.as_f64() {
        if !ms.is_finite() {
            return Err(invalid("options.timestamp must be a finite number of ms"));
        }
        return Ok(TimeTravel::TimestampMs(ms as i64));
    }
    if let Some(text) = value.as_string() {
        return Ok(TimeTravel::TimestampText(text));
    }
    Err(invalid(
        "options.timestamp must be a Date, a number of ms since the epoch, or a string",
    ))
}

/// `requestInit`: a `RequestInit` object. Its `headers` are returned apart (they join
/// `options.headers`); `method` (other than `GET`), `body` and `signal` are refused: the
/// reader only reads, and `options.signal` is the one signal.
fn request_init(value: &JsValue) -> Result<(Object, Vec<(String, String)>)> {
    if !value.is_object() {
        return Err(invalid(
            "options.requestInit must be an object (a RequestInit)",
        ));
    }
    let copy = Object::assign(&Object::new(), value.unchecked_ref());
    let take = |key: &str| -> Result<Option<JsValue>> {
        let found = get(&copy, key)?;
        Reflect::delete_property(&copy, &JsValue::from_str(key))
            .map_err(|_| invalid(format!("cannot read options.requestInit.{key}")))?;
        Ok(found)
    };
    let headers = match take("headers")? {
        Some(given) => headers(&given, "requestInit.headers")?,
        None => Vec::new(),
    };
    if let Some(method) = take("method")? {
        if !method
            .as_string()
            .is_some_and(|m| m.eq_ignore_ascii_case("GET"))
        {
            return Err(invalid(
                "options.requestInit.method must be GET (the reader only reads)",
            ));
        }
    }
    if take("body")?.is_some() {
        return Err(invalid(
            "options.requestInit.body cannot be given (the reader sends GETs)",
        ));
    }
    if take("signal")?.is_some() {
        return Err(invalid(
            "give the abort signal as options.signal, not options.requestInit.signal",
        ));
    }
    Ok((copy, headers))
}

/// `headers`: a plain object `{ name: value }` or an array of `[name, value]` pairs (the JS
/// wrapper turns a `Headers` instance into pairs).
fn headers(value: &JsValue, key: &str) -> Result<Vec<(String, String)>> {
    let bad = || {
        invalid(format!(
            "options.{key} must be an object of strings or an array of [name, value] pairs"
        ))
    };
    let pairs: Array = if Array::is_array(value) {
        value.clone().unchecked_into()
    } else if value.is_object() {
        Object::entries(value.unchecked_ref())
    } else {
        return Err(bad());
    };
    let mut out = Vec::with_capacity(pairs.length() as usize);
    for pair in pairs.iter() {
        if !Array::is_array(&pair) {
            return Err(bad());
        }
        let pair: Array = pair.unchecked_into();
        let name = pair.get(0).as_string().ok_or_else(bad)?;
        let value = pair.get(1).as_string().ok_or_else(bad)?;
        out.push((name, value));
    }
    Ok(out)
}

fn function(value: JsValue, key: &str) -> Result<Function> {
    value
        .dyn_into::<Function>()
        .map_err(|_| invalid(format!("options.{key} must be a function")))
}

fn signal(options: &JsValue) -> Result<Option<AbortSignal>> {
    match get(options, "signal")? {
        None => Ok(None),
        Some(v) => {
            // `instanceof AbortSignal` can fail across realms (an iframe's signal); accept
            // anything that looks like one.
            let looks_like = Reflect::has(&v, &JsValue::from_str("aborted")).unwrap_or(false)
                && Reflect::has(&v, &JsValue::from_str("addEventListener")).unwrap_or(false);
            if looks_like {
                Ok(Some(v.unchecked_into()))
            } else {
                Err(invalid("options.signal must be an AbortSignal"))
            }
        }
    }
}
