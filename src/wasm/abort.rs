//! [`AbortWatch`]: an `AbortSignal` (and the scan's own `cancel()`) as a Rust future.
//!
//! Work that can be aborted runs as `select(work, watch.wait())`: when the signal fires, the
//! work future is dropped, which drops every request in flight (the fetch store aborts its
//! `fetch` when its future is dropped), the decoder and the buffered bytes.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures::future::{select, Either};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::AbortSignal;

use super::error::abort_error;

#[derive(Default)]
struct AbortState {
    aborted: Cell<bool>,
    reason: RefCell<JsValue>,
    /// The one task waiting (a scan runs one `next()` at a time; an open has one waiter).
    waker: RefCell<Option<Waker>>,
    /// Called once when the watch fires (a scan drops its idle stream there).
    hook: RefCell<Option<Box<dyn FnOnce()>>>,
}

impl AbortState {
    fn trigger(&self, reason: JsValue) {
        if self.aborted.replace(true) {
            return;
        }
        *self.reason.borrow_mut() = reason;
        let waker = self.waker.borrow_mut().take();
        if let Some(waker) = waker {
            waker.wake();
        }
        let hook = self.hook.borrow_mut().take();
        if let Some(hook) = hook {
            hook();
        }
    }
}

/// Watches one optional `AbortSignal`; [`AbortWatch::abort`] aborts from Rust. The event
/// listener is removed when the watch is dropped.
pub(crate) struct AbortWatch {
    state: Rc<AbortState>,
    listener: Option<(AbortSignal, Closure<dyn FnMut()>)>,
}

impl std::fmt::Debug for AbortWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AbortWatch")
            .field("aborted", &self.state.aborted.get())
            .finish()
    }
}

impl AbortWatch {
    /// A watch on `signal` (already aborted if the signal is); without a signal, only
    /// [`abort`](Self::abort) aborts it.
    pub(crate) fn new(signal: Option<&AbortSignal>) -> Self {
        let state = Rc::new(AbortState::default());
        let mut listener = None;
        if let Some(signal) = signal {
            if signal.aborted() {
                state.trigger(signal.reason());
            } else {
                let on_abort = {
                    let state = Rc::clone(&state);
                    let signal = signal.clone();
                    Closure::<dyn FnMut()>::new(move || state.trigger(signal.reason()))
                };
                if signal
                    .add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref())
                    .is_ok()
                {
                    listener = Some((signal.clone(), on_abort));
                }
            }
        }
        AbortWatch { state, listener }
    }

    /// Aborts with `reason` (kept as the error's `cause`).
    pub(crate) fn abort(&self, reason: JsValue) {
        self.state.trigger(reason);
    }

    /// Calls `hook` once when the watch fires (at once if it already has).
    pub(crate) fn on_abort(&self, hook: impl FnOnce() + 'static) {
        if self.is_aborted() {
            hook();
        } else {
            *self.state.hook.borrow_mut() = Some(Box::new(hook));
        }
    }

    /// Whether the watch has fired.
    pub(crate) fn is_aborted(&self) -> bool {
        self.state.aborted.get()
    }

    /// The `AbortError` to reject with.
    pub(crate) fn error(&self) -> JsValue {
        abort_error(&self.state.reason.borrow())
    }

    /// The `AbortError` to reject with instead of `e`, when `e` is the abort of a read this
    /// watch stopped (a `fetch` rejected as aborted before the watch saw the signal).
    pub(crate) fn error_for(&self, e: &crate::error::DeltaError) -> Option<JsValue> {
        (self.is_aborted() && matches!(e, crate::error::DeltaError::Aborted { .. }))
            .then(|| self.error())
    }

    /// Runs `work` until it ends or the watch fires; on abort, `work` is dropped and the
    /// `AbortError` returned.
    pub(crate) async fn run<F: Future>(&self, work: F) -> Result<F::Output, JsValue> {
        if self.is_aborted() {
            return Err(self.error());
        }
        let work = std::pin::pin!(work);
        let fired = Fired(Rc::clone(&self.state));
        let outcome = match select(work, fired).await {
            Either::Left((output, _)) => Some(output),
            Either::Right(((), _)) => None,
        };
        outcome.ok_or_else(|| self.error())
    }
}

impl Drop for AbortWatch {
    fn drop(&mut self) {
        if let Some((signal, on_abort)) = self.listener.take() {
            let _ = signal
                .remove_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
        }
    }
}

/// Ready once the watch has fired.
struct Fired(Rc<AbortState>);

impl Future for Fired {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.aborted.get() {
            return Poll::Ready(());
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}
