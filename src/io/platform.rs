//! The one place where native and wasm32 differ in `Send` bounds.
//!
//! Natively, store futures run on multi-threaded Tokio and must be `Send`; on wasm32 they wrap
//! JS promises, which are not. [`MaybeSend`] and [`MaybeSync`] are `Send`/`Sync` natively and
//! empty on wasm32, and [`BoxFuture`] is the boxed future type used by every store.

use std::future::Future;
use std::pin::Pin;

#[cfg(not(target_arch = "wasm32"))]
mod bounds {
    /// `Send` natively, nothing on wasm32.
    pub trait MaybeSend: Send {}
    impl<T: Send + ?Sized> MaybeSend for T {}
    /// `Sync` natively, nothing on wasm32.
    pub trait MaybeSync: Sync {}
    impl<T: Sync + ?Sized> MaybeSync for T {}
}

#[cfg(target_arch = "wasm32")]
mod bounds {
    /// `Send` natively, nothing on wasm32.
    pub trait MaybeSend {}
    impl<T: ?Sized> MaybeSend for T {}
    /// `Sync` natively, nothing on wasm32.
    pub trait MaybeSync {}
    impl<T: ?Sized> MaybeSync for T {}
}

pub use bounds::{MaybeSend, MaybeSync};

/// A boxed future, `Send` natively.
#[cfg(not(target_arch = "wasm32"))]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A boxed future, `Send` natively.
#[cfg(target_arch = "wasm32")]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;
