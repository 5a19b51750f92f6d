//! Checkpoint decoding (to be written).
