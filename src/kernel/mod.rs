//! The `DeltaKernel` Parquet backend (native, feature `kernel`): data files decoded by
//! `delta_kernel`'s default engine, behind the read layer's [`FileDecoder`] seam
//! (`crate::read::FileDecoder`), outside our own read path.
//!
//! - `decoder`: [`KernelDecoder`], which reads one file task through the kernel's
//!   synchronous iterator on its own thread and finishes the batches as our decoder does;
//! - `one_file_store`: the `object_store` view of the table's store the kernel reads through.
//!
//! Kernel errors keep their cause: our store's own error when the kernel failed on it,
//! Parquet and Arrow errors as such, anything else as `DeltaError::Backend` with the kernel's
//! error as its source.

mod decoder;
mod one_file_store;

pub(crate) use decoder::KernelDecoder;
