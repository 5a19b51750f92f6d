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

/// A boxed stream, `Send` natively.
#[cfg(not(target_arch = "wasm32"))]
pub type BoxStream<'a, T> = Pin<Box<dyn futures::Stream<Item = T> + Send + 'a>>;

/// A boxed stream, `Send` natively.
#[cfg(target_arch = "wasm32")]
pub type BoxStream<'a, T> = Pin<Box<dyn futures::Stream<Item = T> + 'a>>;

/// `boxed()` natively, `boxed_local()` on wasm32.
pub trait BoxedStream<'a, T>: futures::Stream<Item = T> + Sized + 'a {
    /// Boxes the stream: `Send` natively, local on wasm32.
    fn boxed_local_or_send(self) -> BoxStream<'a, T>;
}

#[cfg(not(target_arch = "wasm32"))]
impl<'a, T, S: futures::Stream<Item = T> + Send + 'a> BoxedStream<'a, T> for S {
    fn boxed_local_or_send(self) -> BoxStream<'a, T> {
        Box::pin(self)
    }
}

#[cfg(target_arch = "wasm32")]
impl<'a, T, S: futures::Stream<Item = T> + 'a> BoxedStream<'a, T> for S {
    fn boxed_local_or_send(self) -> BoxStream<'a, T> {
        Box::pin(self)
    }
}
