//! Where an executor reads a decoded scan from: [`store_from_runtime`].
//!
//! A scan's wire form names the table by its URL and nothing else, so each process reaches
//! the table with its own configuration: `file://` roots through the local file system (as
//! `dar` reads them), every other scheme through the object store the executor's DataFusion
//! [`RuntimeEnv`] has registered for the URL's scheme and host (a Ballista executor's
//! runtime producer, a `SessionContext::register_object_store`, ...), and `http(s)://` roots,
//! which need no credentials, through a plain HTTP store when none is registered.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnv;
use object_store::path::Path;
use percent_encoding::percent_decode_str;

use crate::io::{ObjectStoreRange, Store, TableLocation};

/// The store for the table at `location`, as `runtime` reaches it (see the module
/// documentation).
pub fn store_from_runtime(runtime: &RuntimeEnv, location: &TableLocation) -> Result<Store> {
    let url = location.url();
    let own = || -> Result<Store> {
        let store = ObjectStoreRange::from_location(location, &HashMap::new())
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(Arc::new(store))
    };
    if url.scheme() == "file" {
        return own();
    }
    let store_url = ObjectStoreUrl::parse(&url[..url::Position::BeforePath])?;
    match runtime.object_store(&store_url) {
        Ok(store) => {
            let decoded = percent_decode_str(url.path()).decode_utf8_lossy();
            let root = Path::parse(decoded.as_ref()).map_err(|e| {
                DataFusionError::Plan(format!("the table root {location} is not a path: {e}"))
            })?;
            let can_list = !matches!(url.scheme(), "http" | "https");
            Ok(Arc::new(ObjectStoreRange::new(store, root, can_list)))
        }
        Err(_) if matches!(url.scheme(), "http" | "https") => own(),
        Err(e) => Err(DataFusionError::Plan(format!(
            "this process has no object store for {}://{} (the table {location}): register \
             one in its DataFusion runtime (RuntimeEnv::register_object_store); {e}",
            url.scheme(),
            url.host_str().unwrap_or_default()
        ))),
    }
}
