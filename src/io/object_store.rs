//! object_store adapter (to be written).

/// object_store adapter.
#[derive(Debug)]
pub struct ObjectStoreRange;
