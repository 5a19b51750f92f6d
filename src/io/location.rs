//! Table locations (to be written).

/// A normalised table location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLocation;
