//! A third-party decoder's panic on hostile bytes, contained as an error.
//!
//! The page checks ([`super::pages`], [`super::page_contents`]) refuse what they can see
//! without decompressing, and every fault the fuzzers found in them is refused before it
//! reaches a decoder. What lies inside compressed page contents is seen only by arrow-rs's
//! decoders, some of which assert on malformed contents instead of returning an error (a
//! bit-packed level run past its bytes, a dictionary index wider than 32 bits). [`contain`]
//! runs each call into a Parquet decoder so that such a panic comes back as an error naming
//! the file, instead of unwinding through the reader.
//!
//! Containing needs unwinding. A build that aborts on panic (the wasm32 build) cannot contain
//! a decoder's panic, so there [`contained`] is false and the page checks decompress a
//! compressed page's contents to check them too, at the cost of a second decompression of
//! each data page read, and map columns are decoded from their Parquet groups (see
//! [`super::map_groups`]: arrow-rs's map reader turns its list reader's errors into
//! panics). [`behave_as_aborting`] makes a thread of an unwinding build do the same (the
//! fuzzers' strict mode and the tests of that path): its panics are no longer
//! caught. The standard panic hook prints a contained panic's message;
//! [`quiet_contained_panics`] installs a hook that stays quiet for them (the `dar` binary
//! does; a program embedding the library chooses for itself).

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many contained calls this thread is inside.
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
    /// This thread behaves as a build that aborts on panic (see [`behave_as_aborting`]).
    static ABORTING: Cell<bool> = const { Cell::new(false) };
}

/// Whether a decoder's panic on this thread comes back as an error: the build unwinds on
/// panic and the thread was not told to behave as aborting.
pub(crate) fn contained() -> bool {
    cfg!(panic = "unwind") && !ABORTING.with(Cell::get)
}

/// Makes this thread behave as a build that aborts on panic: the readers no longer catch a
/// decoder's panic, and the page checks decompress page contents to look inside them, as they
/// do on wasm32. For the fuzzers' strict mode and the tests of that path.
pub fn behave_as_aborting(aborting: bool) {
    ABORTING.with(|a| a.set(aborting));
}

/// Runs `decode`, a call into a decoder over bytes from a file; a panic in it comes back as
/// `Err` with the panic's message (where panics can be [`contained`]; elsewhere it goes on).
pub(crate) fn contain<T>(decode: impl FnOnce() -> T) -> Result<T, String> {
    if !contained() {
        return Ok(decode());
    }
    CONTAINED.with(|c| c.set(c.get().saturating_add(1)));
    // The decoder's state is dropped with the error: nothing observes it after a panic.
    let result = panic::catch_unwind(AssertUnwindSafe(decode));
    CONTAINED.with(|c| c.set(c.get().saturating_sub(1)));
    result.map_err(|payload| message(payload.as_ref()))
}

/// The text of a panic's payload.
fn message(payload: &(dyn Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(text), _) => (*text).to_string(),
        (_, Some(text)) => text.clone(),
        _ => "a panic without a message".to_string(),
    }
}

/// Installs (once per process) a panic hook that prints nothing for a decoder panic the readers
/// contain as an error, and hands every other panic to the hook installed before it.
pub fn quiet_contained_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CONTAINED.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_comes_back_as_its_message() {
        quiet_contained_panics();
        assert_eq!(contain(|| 7), Ok(7));
        let found: Result<(), String> = contain(|| panic!("bit width {} too wide", 40));
        assert_eq!(found, Err("bit width 40 too wide".to_string()));
        let text: Result<(), String> = contain(|| std::panic::panic_any(5u8));
        assert_eq!(text, Err("a panic without a message".to_string()));
        // The count is back to 0: a later panic outside is not contained.
        assert_eq!(CONTAINED.with(Cell::get), 0);
    }
}
