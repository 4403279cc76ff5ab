//! The client's memory budget: one byte count per client against which every buffer of part
//! data its managed transfers hold (stream parts, download reorder buffers, write buffers) is
//! admitted before the request that fills it is sent. However many transfers run at once,
//! together they never hold more part data than the client was configured to allow.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// A client's byte budget, shared as `Arc<MemoryBudget>` by all of its transfers.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    capacity: u64,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    in_use: u64,
    high_water: u64,
    next_id: u64,
    /// Admissions waiting for bytes, oldest first: only the front one may be granted, so a
    /// large request is not starved by a stream of small ones.
    queue: VecDeque<Waiter>,
    /// Waiters granted (their bytes are in `in_use`) whose future has not yet taken its
    /// `Admission`: a future dropped now must give the bytes back.
    granted: Vec<u64>,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    bytes: u64,
    waker: Waker,
}

impl State {
    fn add(&mut self, bytes: u64) {
        self.in_use += bytes;
        self.high_water = self.high_water.max(self.in_use);
    }

    /// Whether `bytes` are admitted without waiting: none, or they fit and nobody waits
    /// ahead (a waiter in the queue goes first).
    fn admits_at_once(&self, bytes: u64, capacity: u64) -> bool {
        bytes == 0 || (self.queue.is_empty() && bytes <= capacity - self.in_use)
    }

    fn remove(&mut self, bytes: u64) {
        debug_assert!(bytes <= self.in_use, "released more than was admitted");
        self.in_use = self.in_use.saturating_sub(bytes);
    }

    /// Grants the waiters at the front of the queue while they fit; returns their wakers,
    /// to be woken once the lock is released.
    fn grant(&mut self, capacity: u64) -> Vec<Waker> {
        let mut wakers = Vec::new();
        while self
            .queue
            .front()
            .is_some_and(|w| w.bytes <= capacity - self.in_use)
        {
            let Some(waiter) = self.queue.pop_front() else {
                break;
            };
            self.add(waiter.bytes);
            self.granted.push(waiter.id);
            wakers.push(waiter.waker);
        }
        wakers
    }
}

impl MemoryBudget {
    pub(crate) fn new(capacity: u64) -> Self {
        Self {
            capacity,
            state: Mutex::new(State::default()),
        }
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Waits until `bytes` fit, first come first served (FIFO: a large request is not starved
    /// by a stream of small ones). Fails at once with `TooLarge` if `bytes > capacity` (it
    /// never could fit). A zero-byte admission succeeds at once. Dropping the future while it
    /// waits leaves the queue (and lets the next waiter in if it now fits); no bytes are lost.
    pub(crate) async fn admit(self: &Arc<Self>, bytes: u64) -> Result<Admission, TooLarge> {
        if bytes > self.capacity {
            return Err(TooLarge {
                needed: bytes,
                capacity: self.capacity,
            });
        }
        Ok(Wait {
            budget: Arc::clone(self),
            bytes,
            id: None,
            queued_at: None,
        }
        .await)
    }

    /// `bytes` admitted now if [`MemoryBudget::admit`] would admit them without waiting,
    /// otherwise `None` (nothing is queued): for work that can start at once when the memory
    /// is free, and otherwise waits with `admit`.
    pub(crate) fn try_admit(self: &Arc<Self>, bytes: u64) -> Option<Admission> {
        let mut state = self.lock();
        if !state.admits_at_once(bytes, self.capacity) {
            return None;
        }
        state.add(bytes);
        drop(state);
        Some(Admission {
            budget: Arc::clone(self),
            bytes,
            queued: std::time::Duration::ZERO,
        })
    }

    pub(crate) fn usage(&self) -> MemoryUsage {
        let state = self.lock();
        MemoryUsage {
            capacity: self.capacity,
            in_use: state.in_use,
            high_water: state.high_water,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Gives `bytes` back and wakes the waiters that now fit.
    fn release(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let wakers = {
            let mut state = self.lock();
            state.remove(bytes);
            state.grant(self.capacity)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

/// A queued admission. `id` is set while it is in the queue or granted but not yet taken.
struct Wait {
    budget: Arc<MemoryBudget>,
    bytes: u64,
    id: Option<u64>,
    /// When it joined the queue (it did not fit at once).
    queued_at: Option<std::time::Instant>,
}

impl Future for Wait {
    type Output = Admission;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Admission> {
        let this = self.get_mut();
        let mut state = this.budget.lock();
        match this.id {
            // First poll: in at once if nobody waits ahead and the bytes fit (or are none).
            None if state.admits_at_once(this.bytes, this.budget.capacity) => {
                state.add(this.bytes);
            }
            None => {
                let id = state.next_id;
                state.next_id += 1;
                let waker = cx.waker().clone();
                state.queue.push_back(Waiter {
                    id,
                    bytes: this.bytes,
                    waker,
                });
                this.id = Some(id);
                this.queued_at = Some(std::time::Instant::now());
                return Poll::Pending;
            }
            Some(id) => {
                let Some(at) = state.granted.iter().position(|&g| g == id) else {
                    if let Some(waiter) = state.queue.iter_mut().find(|w| w.id == id) {
                        waiter.waker.clone_from(cx.waker());
                    }
                    return Poll::Pending;
                };
                state.granted.swap_remove(at);
                this.id = None;
            }
        }
        drop(state);
        Poll::Ready(Admission {
            budget: Arc::clone(&this.budget),
            bytes: this.bytes,
            queued: this.queued_at.map(|at| at.elapsed()).unwrap_or_default(),
        })
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let wakers = {
            let mut state = self.budget.lock();
            if let Some(at) = state.granted.iter().position(|&g| g == id) {
                state.granted.swap_remove(at);
                state.remove(self.bytes);
            } else {
                state.queue.retain(|w| w.id != id);
            }
            // Either way the waiters behind it may now fit.
            state.grant(self.budget.capacity)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

/// Bytes held until dropped.
#[derive(Debug)]
pub(crate) struct Admission {
    budget: Arc<MemoryBudget>,
    bytes: u64,
    /// How long it waited in the queue.
    queued: std::time::Duration,
}

impl Admission {
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// How long the admission waited for its memory (what request hooks report as
    /// `queued`).
    pub(crate) fn queued(&self) -> std::time::Duration {
        self.queued
    }

    /// Gives back all but `bytes` (a stream part that turned out shorter than its capacity).
    /// An admission never grows: a larger `bytes` changes nothing.
    pub(crate) fn shrink_to(&mut self, bytes: u64) {
        if bytes < self.bytes {
            let freed = self.bytes - bytes;
            self.bytes = bytes;
            self.budget.release(freed);
        }
    }
}

impl Admission {
    /// Moves `bytes` of this admission (all of it, if it holds fewer) into a new one: a
    /// buffer read ahead becomes the parts cut from it.
    pub(crate) fn split_off(&mut self, bytes: u64) -> Admission {
        let moved = bytes.min(self.bytes);
        self.bytes -= moved;
        Admission {
            budget: self.budget.clone(),
            bytes: moved,
            queued: self.queued,
        }
    }

    /// Takes over the bytes of `other`, an admission of the same budget.
    pub(crate) fn absorb(&mut self, mut other: Admission) {
        debug_assert!(Arc::ptr_eq(&self.budget, &other.budget));
        self.bytes += std::mem::take(&mut other.bytes);
        self.queued = self.queued.max(other.queued);
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// A buffer larger than the whole budget: it could never be admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLarge {
    pub(crate) needed: u64,
    pub(crate) capacity: u64,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { needed, capacity } = self;
        write!(
            f,
            "{needed} bytes exceed the client's memory budget of {capacity} bytes"
        )
    }
}

impl std::error::Error for TooLarge {}

/// What a client's transfers hold now, and the most they ever held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryUsage {
    /// The budget: the most part data the client's transfers may hold at once.
    pub capacity: u64,
    /// Bytes admitted now.
    pub in_use: u64,
    /// The most bytes ever admitted at once.
    pub high_water: u64,
}

#[cfg(test)]
mod split_tests {
    use super::*;

    #[tokio::test]
    async fn split_and_absorbed_admissions_keep_the_count_exact() {
        let budget = Arc::new(MemoryBudget::new(100));
        let mut read_ahead = budget.admit(60).await.unwrap();
        let mut part = read_ahead.split_off(25);
        assert_eq!((read_ahead.bytes(), part.bytes()), (35, 25));
        part.absorb(budget.admit(15).await.unwrap());
        assert_eq!(part.bytes(), 40);
        assert_eq!(budget.usage().in_use, 75);
        let rest = read_ahead.split_off(1_000);
        assert_eq!((read_ahead.bytes(), rest.bytes()), (0, 35));
        drop((read_ahead, rest));
        assert_eq!(budget.usage().in_use, 40);
        drop(part);
        assert_eq!(budget.usage().in_use, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::task::{JoinHandle, yield_now};

    fn budget(capacity: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget::new(capacity))
    }

    /// (in_use, high_water)
    fn usage(budget: &MemoryBudget) -> (u64, u64) {
        let usage = budget.usage();
        (usage.in_use, usage.high_water)
    }

    /// Polls once with a waker that does nothing: the tests re-poll by hand.
    fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(Waker::noop()))
    }

    /// Admits `bytes` on a task of its own, which is left waiting in the queue.
    async fn queued(budget: &Arc<MemoryBudget>, bytes: u64) -> JoinHandle<u64> {
        let budget = budget.clone();
        let task = tokio::spawn(async move { budget.admit(bytes).await.unwrap().bytes() });
        yield_now().await;
        assert!(!task.is_finished());
        task
    }

    /// What a `queued` task returned, once it was woken (a lost wake-up fails, not hangs).
    async fn granted<T>(task: JoinHandle<T>) -> T {
        let finished = tokio::time::timeout(Duration::from_secs(10), task).await;
        finished.expect("not woken in time").unwrap()
    }

    #[tokio::test]
    async fn admits_and_releases() {
        let b = budget(100);
        let x = b.admit(60).await.unwrap();
        let y = b.admit(40).await.unwrap();
        assert_eq!((x.bytes(), y.bytes(), usage(&b)), (60, 40, (100, 100)));
        drop(x);
        assert_eq!(usage(&b), (40, 100));
        drop(y);
        assert_eq!((b.usage().capacity, usage(&b)), (100, (0, 100)));
    }

    #[tokio::test]
    async fn waits_for_release() {
        let b = budget(10);
        let held = b.admit(7).await.unwrap();
        let waiter = queued(&b, 5).await;
        // A zero-byte admission does not queue behind it.
        assert_eq!(b.admit(0).await.unwrap().bytes(), 0);
        drop(held);
        assert_eq!(granted(waiter).await, 5);
        assert_eq!(usage(&b), (0, 7));
    }

    #[tokio::test]
    async fn fifo_big_request_served_before_later_small_ones() {
        let b = budget(10);
        let first = b.admit(6).await.unwrap();
        let mut big = Box::pin(b.admit(8));
        let mut small = Box::pin(b.admit(3));
        assert!(poll_once(big.as_mut()).is_pending());
        // 6 + 3 fit, but the big request came first.
        assert!(poll_once(small.as_mut()).is_pending());
        drop(first);
        let Poll::Ready(Ok(big)) = poll_once(big.as_mut()) else {
            panic!("the big request was not served first")
        };
        assert!(poll_once(small.as_mut()).is_pending());
        drop(big);
        assert!(matches!(poll_once(small.as_mut()), Poll::Ready(Ok(a)) if a.bytes() == 3));
        assert_eq!(usage(&b), (0, 8));
    }

    #[tokio::test]
    async fn try_admit_takes_only_free_memory_nobody_waits_for() {
        let b = budget(10);
        let held = b.try_admit(6).expect("free memory");
        assert_eq!(
            (held.bytes(), held.queued(), usage(&b)),
            (6, Duration::ZERO, (6, 6))
        );
        // Does not fit: refused, and nothing is queued.
        assert!(b.try_admit(5).is_none());
        assert_eq!(usage(&b), (6, 6));
        let mut big = Box::pin(b.admit(8));
        assert!(poll_once(big.as_mut()).is_pending());
        // 6 + 3 fit, but the waiter goes first; a zero-byte admission never waits.
        assert!(b.try_admit(3).is_none());
        assert_eq!(b.try_admit(0).map(|a| a.bytes()), Some(0));
        assert!(b.try_admit(11).is_none());
        drop(held);
        let Poll::Ready(Ok(big)) = poll_once(big.as_mut()) else {
            panic!("the waiter was not served")
        };
        assert_eq!(b.try_admit(2).map(|a| a.bytes()), Some(2));
        drop(big);
        assert_eq!(usage(&b), (0, 10));
    }

    #[tokio::test]
    async fn shrink_to_wakes_a_waiter() {
        let b = budget(10);
        let mut part = b.admit(10).await.unwrap();
        let waiter = queued(&b, 4).await;
        part.shrink_to(6);
        part.shrink_to(9); // never grows
        assert_eq!(part.bytes(), 6);
        assert_eq!(granted(waiter).await, 4);
        drop(part);
        assert_eq!(usage(&b), (0, 10));
    }

    #[tokio::test]
    async fn dropping_a_waiting_future_unblocks_the_next() {
        let b = budget(10);
        let held = b.admit(5).await.unwrap();
        let mut blocked = Box::pin(b.admit(10));
        assert!(poll_once(blocked.as_mut()).is_pending());
        let next = queued(&b, 5).await;
        drop(blocked);
        assert_eq!(granted(next).await, 5);
        drop(held);
        assert_eq!(usage(&b), (0, 10));
    }

    #[tokio::test]
    async fn dropping_a_granted_unpolled_future_returns_its_bytes() {
        let b = budget(10);
        let held = b.admit(10).await.unwrap();
        let mut waiting = Box::pin(b.admit(8));
        assert!(poll_once(waiting.as_mut()).is_pending());
        drop(held);
        assert_eq!(usage(&b).0, 8); // granted, not yet taken
        drop(waiting);
        assert_eq!(usage(&b).0, 0);
        assert_eq!(b.admit(10).await.unwrap().bytes(), 10);
    }

    #[tokio::test]
    async fn too_large_fails_at_once() {
        let b = budget(10);
        let _held = b.admit(10).await.unwrap();
        let err = b.admit(11).await.unwrap_err();
        assert_eq!((err.needed, err.capacity), (11, 10));
        assert!(err.to_string().contains("11 bytes"));
    }

    #[tokio::test]
    async fn high_water_is_the_peak() {
        let b = budget(100);
        let a = b.admit(30).await.unwrap();
        let mut c = b.admit(50).await.unwrap();
        c.shrink_to(10);
        drop(a);
        let _d = b.admit(20).await.unwrap();
        assert_eq!(usage(&b), (30, 80));
    }

    #[test]
    fn types_are_send_and_sync() {
        fn send_sync<T: Send + Sync>(_: &T) {}
        let b = budget(1);
        send_sync(&b);
        send_sync(&b.admit(1));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stress_random_sizes_multi_thread() {
        const CAPACITY: u64 = 1000;
        let b = budget(CAPACITY);
        let task = |mut rng: u64| {
            let b = b.clone();
            let mut next = move |below: u64| {
                rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (rng >> 33) % below
            };
            tokio::spawn(async move {
                for _ in 0..300 {
                    let size = next(CAPACITY + 1);
                    if next(3) == 0 {
                        // Dropped after one poll: while queued, or granted but not taken.
                        tokio::select! { biased; _ = yield_now() => {} _ = b.admit(size) => {} }
                    } else {
                        let mut admission = b.admit(size).await.unwrap();
                        assert!(usage(&b).0 <= CAPACITY);
                        admission.shrink_to(next(2 * size + 1));
                        yield_now().await;
                    }
                    assert!(usage(&b).0 <= CAPACITY);
                }
            })
        };
        let tasks: Vec<_> = (1..=8)
            .map(|seed| task(0x9E37_79B9_7F4A_7C15_u64.wrapping_mul(seed)))
            .collect();
        for task in tasks {
            granted(task).await;
        }
        let state = b.lock();
        assert!(state.in_use == 0 && state.high_water <= CAPACITY);
        assert!(state.queue.is_empty() && state.granted.is_empty());
    }
}
