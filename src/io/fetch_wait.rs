//! What the fetch store waits on besides `fetch` itself (wasm32 only): the backoff timer
//! ([`Sleep`]), the caller's `AbortSignal` ([`SignalFired`]), and the per-attempt
//! `AbortController` that cancels a request whose future is dropped ([`AbortOnDrop`]).
//!
//! Each of them cleans up after itself when dropped: the timer is cleared, the `abort`
//! listener removed, the request aborted.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal};

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

/// Ready once `signal` has fired (at once if it already had). Its `abort` listener is removed
/// when the future is dropped, so a long-lived signal does not gather one per request.
pub(super) struct SignalFired {
    signal: AbortSignal,
    promise: Option<JsFuture>,
    listener: Option<Function>,
}

impl SignalFired {
    pub(super) fn new(signal: &AbortSignal) -> SignalFired {
        let mut fired = SignalFired {
            signal: signal.clone(),
            promise: None,
            listener: None,
        };
        if signal.aborted() {
            return fired;
        }
        let mut listener = None;
        let promise = Promise::new(&mut |resolve: Function, _reject: Function| {
            if signal
                .add_event_listener_with_callback("abort", &resolve)
                .is_ok()
            {
                listener = Some(resolve);
            }
        });
        // Without a listener the promise never settles: the signal is then checked on each
        // poll only, which is still correct at every await point of the store.
        fired.promise = Some(JsFuture::from(promise));
        fired.listener = listener;
        fired
    }
}

impl Future for SignalFired {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.aborted() {
            return Poll::Ready(());
        }
        match self.promise.as_mut() {
            Some(promise) => match Pin::new(promise).poll(cx) {
                Poll::Ready(_) => Poll::Ready(()),
                Poll::Pending => Poll::Pending,
            },
            None => Poll::Pending,
        }
    }
}

impl Drop for SignalFired {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.take() {
            let _ = self
                .signal
                .remove_event_listener_with_callback("abort", &listener);
        }
    }
}
