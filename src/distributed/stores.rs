//! Where an executor reads a decoded scan from: [`store_from_runtime`].
//!
//! A scan's wire form names the table by its URL and nothing else, so each process reaches
//! the table with its own configuration: `file://` roots through the local file system (as
//! `dar` reads them), `http(s)://` roots through a plain HTTP store, and every other scheme
//! through the object store the process's DataFusion [`RuntimeEnv`] has registered for the
//! URL's scheme and host (a Ballista executor's runtime producer, a
//! `SessionContext::register_object_store`, ...), else through a store built from the
//! process's own storage options ([`StorageOptions`]: endpoint, region, credentials; given
//! to the codec where the process starts, never sent with a plan).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnv;
use object_store::path::Path;
use percent_encoding::percent_decode_str;

use crate::io::{ObjectStoreRange, Store, TableLocation};

/// Storage options of one process (`aws_region`, `aws_endpoint`, `aws_access_key_id`, ...,
/// as [`crate::DeltaTableBuilder::with_storage_options`] takes them).
pub type StorageOptions = Arc<HashMap<String, String>>;

/// The store for the table at `location`, as `runtime` and `options` reach it (see the
/// module documentation).
pub fn store_from_runtime(
    runtime: &RuntimeEnv,
    location: &TableLocation,
    options: &HashMap<String, String>,
) -> Result<Store> {
    let url = location.url();
    let own = |options: &HashMap<String, String>| -> Result<Store> {
        let store = ObjectStoreRange::from_location(location, options)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(Arc::new(store))
    };
    // Local files and plain HTTP take no options.
    if matches!(url.scheme(), "file" | "http" | "https") {
        return own(&HashMap::new());
    }
    let store_url = ObjectStoreUrl::parse(&url[..url::Position::BeforePath])?;
    match runtime.object_store(&store_url) {
        Ok(store) => {
            let decoded = percent_decode_str(url.path()).decode_utf8_lossy();
            let root = Path::parse(decoded.as_ref()).map_err(|e| {
                DataFusionError::Plan(format!("the table root {location} is not a path: {e}"))
            })?;
            Ok(Arc::new(ObjectStoreRange::new(store, root, true)))
        }
        Err(_) => own(options).map_err(|e| {
            DataFusionError::Plan(format!(
                "this process cannot reach {location} (no object store is registered for \
                 {}://{} in its DataFusion runtime, and its own storage options do not \
                 build one): {e}",
                url.scheme(),
                url.host_str().unwrap_or_default()
            ))
        }),
    }
}
