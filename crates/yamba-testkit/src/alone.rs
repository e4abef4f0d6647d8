//! One measurement check at a time inside a test binary.
//!
//! libtest runs a binary's tests on parallel threads, and cargo runs test
//! binaries one after another; a measurement check that holds [`alone`]
//! for its whole body, in a binary of measurement checks only
//! (`tests/measure*.rs`), therefore never runs beside another test.

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};

static ALONE: Mutex<()> = Mutex::new(());

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// Held while a measurement check runs; see [`alone`].
pub struct Alone {
    _guard: Option<MutexGuard<'static, ()>>,
}

/// Waits until no other measurement check of this process runs, and keeps
/// it so until the guard is dropped. A thread that already holds it gets it
/// again at once (a test holding it calls [`crate::Check::decide`], which
/// takes it too). A check that panicked while holding it does not block
/// the others.
pub fn alone() -> Alone {
    let nested = HELD.with(|h| {
        let n = h.get();
        h.set(n + 1);
        n > 0
    });
    if nested {
        return Alone { _guard: None };
    }
    let guard = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    Alone {
        _guard: Some(guard),
    }
}

impl Drop for Alone {
    fn drop(&mut self) {
        HELD.with(|h| h.set(h.get() - 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn holders_never_overlap_and_a_holder_may_take_it_again() {
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (inside, most) = (inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let _a = alone();
                        let _again = alone();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_panic_while_holding_it_does_not_block_the_next() {
        let _ = std::thread::spawn(|| {
            let _a = alone();
            panic!("planted");
        })
        .join();
        let _a = alone();
    }
}
