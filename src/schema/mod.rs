//! Delta table schemas (to be written).
