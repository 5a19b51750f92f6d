//! What the JS stores wait on besides `fetch` or the byte source itself (wasm32 only): the
//! backoff timer ([`Sleep`]), the caller's `AbortSignal` ([`StoreSignal`]), and the
//! per-attempt `AbortController` that cancels a request whose future is dropped
//! ([`AbortOnDrop`]).
//!
//! Each of them cleans up after itself when dropped: the timer is cleared, the `abort`
//! listener removed once no request waits, the request aborted.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use std::cell::RefCell;
use std::rc::Rc;
use std::task::Waker;

use futures::future::{select, Either};
use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal};

use super::phase_for;
use crate::error::{redact, DeltaError, Result};

#[wasm_bindgen]
extern "C" {
    /// The global `setTimeout`; its id is a number in browsers and an object in Node.js.
    #[wasm_bindgen(js_name = setTimeout, catch)]
    fn js_set_timeout(handler: &Function, ms: i32) -> std::result::Result<JsValue, JsValue>;

    /// The global `clearTimeout`.
    #[wasm_bindgen(js_name = clearTimeout, catch)]
    fn js_clear_timeout(id: &JsValue) -> std::result::Result<(), JsValue>;
}

/// Aborts the fetch when dropped while still holding the controller.
pub(super) struct AbortOnDrop(pub(super) Option<AbortController>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

/// A `setTimeout` as a future; the timer is cleared when the future is dropped.
pub(super) struct Sleep {
    promise: JsFuture,
    id: Option<JsValue>,
}

impl Sleep {
    pub(super) fn new(delay: Duration) -> Sleep {
        let ms = i32::try_from(delay.as_millis()).unwrap_or(i32::MAX);
        let mut id = None;
        let promise = Promise::new(&mut |resolve: Function, _reject: Function| {
            match js_set_timeout(&resolve, ms) {
                Ok(timer) => id = Some(timer),
                // No timers here: go on at once rather than wait forever.
                Err(_) => {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
        });
        Sleep {
            promise: JsFuture::from(promise),
            id,
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match Pin::new(&mut self.promise).poll(cx) {
            Poll::Ready(_) => {
                self.id = None;
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = js_clear_timeout(&id);
        }
    }
}

/// The caller's `AbortSignal` as a store holds it: every request of the store and of its
/// clones waits on it through one `abort` listener, added while some request waits and
/// removed when none does. A listener per request would gather more than ten on one signal
/// when a log's commits are fetched side by side, which Node.js reports as a possible leak
/// (`MaxListenersExceededWarning`).
#[derive(Clone)]
pub(super) struct StoreSignal(Rc<Watched>);

struct Watched {
    signal: AbortSignal,
    waiting: RefCell<Waiting>,
}

/// The tasks waiting on the signal, and the listener that wakes them while there are any.
#[derive(Default)]
struct Waiting {
    next_id: u64,
    wakers: Vec<(u64, Waker)>,
    listener: Option<Closure<dyn FnMut()>>,
}

impl StoreSignal {
    pub(super) fn new(signal: AbortSignal) -> StoreSignal {
        StoreSignal(Rc::new(Watched {
            signal,
            waiting: RefCell::default(),
        }))
    }

    /// `work`'s output, or [`DeltaError::Aborted`] for `path` as soon as the signal fires
    /// (`work` is then dropped: a request in it is aborted).
    pub(super) async fn unless_aborted<T>(
        &self,
        path: &str,
        work: impl Future<Output = T>,
    ) -> Result<T> {
        let aborted = || DeltaError::Aborted {
            path: redact(path),
            phase: phase_for(path),
        };
        if self.0.signal.aborted() {
            return Err(aborted());
        }
        let fired = SignalFired {
            watched: Rc::clone(&self.0),
            id: None,
        };
        match select(std::pin::pin!(work), fired).await {
            Either::Left((output, _)) => Ok(output),
            Either::Right(((), _)) => Err(aborted()),
        }
    }
}

impl Watched {
    /// Notes `waker` under `id` (a new id when `None`), and listens to the signal if no one
    /// did.
    fn wait(self: &Rc<Self>, id: Option<u64>, waker: &Waker) -> u64 {
        let mut waiting = self.waiting.borrow_mut();
        let id = match id {
            Some(id) => id,
            None => {
                waiting.next_id += 1;
                waiting.next_id
            }
        };
        match waiting.wakers.iter_mut().find(|(each, _)| *each == id) {
            Some((_, known)) => known.clone_from(waker),
            None => waiting.wakers.push((id, waker.clone())),
        }
        if waiting.listener.is_none() {
            let watched = Rc::downgrade(self);
            let on_abort = Closure::<dyn FnMut()>::new(move || {
                if let Some(watched) = watched.upgrade() {
                    // Taken out before waking: a woken task is polled later, never here.
                    let wakers = std::mem::take(&mut watched.waiting.borrow_mut().wakers);
                    for (_, waker) in wakers {
                        waker.wake();
                    }
                }
            });
            if self
                .signal
                .add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref())
                .is_ok()
            {
                waiting.listener = Some(on_abort);
            }
            // Without a listener the signal is still checked on each poll, which is correct
            // at every await point of the store.
        }
        id
    }

    /// Forgets the waiter `id`; the last one removes the listener.
    fn forget(&self, id: u64) {
        let mut waiting = self.waiting.borrow_mut();
        waiting.wakers.retain(|(each, _)| *each != id);
        if waiting.wakers.is_empty() {
            if let Some(listener) = waiting.listener.take() {
                let _ = self.signal.remove_event_listener_with_callback(
                    "abort",
                    listener.as_ref().unchecked_ref(),
                );
            }
        }
    }
}

/// Ready once the store's signal has fired (at once if it already had).
struct SignalFired {
    watched: Rc<Watched>,
    id: Option<u64>,
}

impl Future for SignalFired {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.watched.signal.aborted() {
            return Poll::Ready(());
        }
        let id = self.watched.wait(self.id, cx.waker());
        self.id = Some(id);
        Poll::Pending
    }
}

impl Drop for SignalFired {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.watched.forget(id);
        }
    }
}
