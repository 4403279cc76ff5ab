//! An optional per-client bandwidth limit: a token bucket in bytes per second, drawn from by
//! the bytes bodies actually hand over ([`Throttled`] wraps request and response bodies), so
//! it really limits rather than aiming at a rate. Bodies are cut into small pieces so that
//! each wait stays short (about 1/8 s; up to 1 KiB / rate below 8 KiB/s) and stall detection
//! keeps seeing bytes move.

use std::num::NonZeroU64;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// Token units per byte: the balance is kept in billionths of a byte, so a refill of
/// `rate` × elapsed nanoseconds is exact and long-run throughput is exactly the rate.
const SCALE: i128 = 1_000_000_000;
const MIN_PIECE: u64 = 1024;
const MAX_PIECE: u64 = 256 * 1024;

/// One direction of a client's bandwidth limit (the client makes one for sending and one
/// for receiving), shared by every body of that direction.
///
/// A piece may be taken whenever the balance is not negative, and may drive it negative: a
/// large piece is never starved by small ones, and long-run throughput is exactly the rate
/// (timer lateness is credited, up to one piece). After an idle spell at most two pieces
/// pass at once (one of credit, one on debt).
#[derive(Debug)]
pub(crate) struct Bandwidth {
    rate: u64,
    piece: usize,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Scaled tokens; negative while pieces already let through are being paid off.
    balance: i128,
    refilled: Instant,
}

impl Bandwidth {
    pub(crate) fn new(bytes_per_second: NonZeroU64) -> Self {
        let rate = bytes_per_second.get();
        let piece = (rate / 8).clamp(MIN_PIECE, MAX_PIECE) as usize;
        Self {
            rate,
            piece,
            // Starts empty: the first piece passes at once (on debt), then the rate applies.
            bucket: Mutex::new(Bucket {
                balance: 0,
                refilled: Instant::now(),
            }),
        }
    }

    /// Bytes per second.
    #[cfg(test)]
    pub(crate) fn rate(&self) -> u64 {
        self.rate
    }

    /// The most bytes a body hands over at once: what the rate allows in about 1/8 s,
    /// clamped to 1 KiB..=256 KiB. It is also the most credit the bucket saves up.
    #[cfg(test)]
    pub(crate) fn piece(&self) -> usize {
        self.piece
    }

    /// Takes `bytes` tokens if the balance is not negative (it may go negative: the debt is
    /// paid off before the next piece); otherwise says when the balance is back to zero.
    fn try_take(&self, bytes: usize) -> Result<(), Instant> {
        let mut bucket = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(bucket.refilled).as_nanos();
        let refill =
            i128::try_from(elapsed.saturating_mul(u128::from(self.rate))).unwrap_or(i128::MAX);
        let burst = self.piece as i128 * SCALE;
        bucket.balance = bucket.balance.saturating_add(refill).min(burst);
        bucket.refilled = now;
        if bucket.balance >= 0 {
            bucket.balance -= bytes as i128 * SCALE;
            return Ok(());
        }
        let debt = bucket.balance.unsigned_abs();
        let rate = u128::from(self.rate);
        let nanos = u64::try_from(debt.div_ceil(rate)).unwrap_or(u64::MAX);
        Err(now + Duration::from_nanos(nanos))
    }
}

/// A body whose data frames are handed over in pieces of at most [`Bandwidth::piece`]
/// bytes, each once the limit allows it. Trailers and errors pass through unchanged.
pub(crate) struct Throttled<B> {
    inner: B,
    limit: Arc<Bandwidth>,
    /// The rest of the inner body's last data frame, not yet handed over.
    held: Bytes,
    /// Created at the first wait, re-armed for each later one.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<B> Throttled<B> {
    pub(crate) fn new(inner: B, limit: Arc<Bandwidth>) -> Self {
        Self {
            inner,
            limit,
            held: Bytes::new(),
            sleep: None,
        }
    }
}

impl<B> Body for Throttled<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        loop {
            if !this.held.is_empty() {
                let n = this.held.len().min(this.limit.piece);
                match this.limit.try_take(n) {
                    Ok(()) => return Poll::Ready(Some(Ok(Frame::data(this.held.split_to(n))))),
                    Err(at) => {
                        let sleep = match &mut this.sleep {
                            Some(sleep) => {
                                sleep.as_mut().reset(at);
                                sleep
                            }
                            None => this.sleep.insert(Box::pin(tokio::time::sleep_until(at))),
                        };
                        ready!(sleep.as_mut().poll(cx));
                        continue;
                    }
                }
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) if !data.is_empty() => this.held = data,
                    Ok(empty) => return Poll::Ready(Some(Ok(Frame::data(empty)))),
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                other => return Poll::Ready(other),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.held.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let held = self.held.len() as u64;
        let mut hint = SizeHint::new();
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(held));
        }
        hint.set_lower(inner.lower().saturating_add(held));
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderMap;
    use http_body_util::BodyExt;
    use std::collections::VecDeque;

    type Frames = VecDeque<Result<Frame<Bytes>, &'static str>>;

    /// A body that yields the frames it was given.
    struct Script(Frames);

    impl Script {
        fn data(chunks: &[Bytes]) -> Self {
            Self(chunks.iter().cloned().map(|c| Ok(Frame::data(c))).collect())
        }
    }

    impl Body for Script {
        type Data = Bytes;
        type Error = &'static str;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front())
        }
        fn is_end_stream(&self) -> bool {
            self.0.is_empty()
        }
        fn size_hint(&self) -> SizeHint {
            SizeHint::with_exact(sizes(&self.0).iter().sum::<usize>() as u64)
        }
    }

    /// The sizes of the data frames.
    fn sizes(frames: &Frames) -> Vec<usize> {
        let data = frames.iter().flatten().filter_map(Frame::data_ref);
        data.map(Bytes::len).collect()
    }

    fn joined(frames: &Frames) -> Vec<u8> {
        let data = frames.iter().flatten().filter_map(Frame::data_ref);
        data.flat_map(|d| d.to_vec()).collect()
    }

    /// All frames of `body`, in order.
    async fn frames(mut body: Throttled<Script>) -> Frames {
        let mut out = VecDeque::new();
        while let Some(frame) = body.frame().await {
            out.push_back(frame);
        }
        out
    }

    const RATE: u64 = 1 << 20; // 1 MiB/s: pieces of 128 KiB, 125 ms each.

    fn limit(rate: u64) -> Arc<Bandwidth> {
        Arc::new(Bandwidth::new(NonZeroU64::new(rate).unwrap()))
    }

    fn pattern(len: usize) -> Bytes {
        (0..len).map(|i| (i % 251) as u8).collect::<Vec<_>>().into()
    }

    /// Asserts that `bytes` at `RATE` took no less than their time since `start`, and at most
    /// 5 ms more.
    fn took_time_of(start: Instant, bytes: usize) {
        let (took, expected) = (
            start.elapsed(),
            Duration::from_nanos(bytes as u64 * 1_000_000_000 / RATE),
        );
        assert!(
            took >= expected && took <= expected + Duration::from_millis(5),
            "{took:?} {expected:?}"
        );
    }

    #[test]
    fn piece_is_an_eighth_of_a_second_clamped() {
        assert_eq!(limit(1).piece(), 1024);
        assert_eq!((limit(RATE).piece(), limit(RATE).rate()), (128 << 10, RATE));
        assert_eq!(limit(1 << 30).piece(), 256 << 10);
    }

    #[tokio::test(start_paused = true)]
    async fn n_bytes_take_n_minus_burst_over_rate() {
        let (limit, n) = (limit(RATE), 4 << 20);
        let start = Instant::now();
        let body = Script::data(&[pattern(n / 2), pattern(n / 2)]);
        let got = frames(Throttled::new(body, limit.clone())).await;
        took_time_of(start, n - limit.piece());
        assert_eq!(got.len(), n / limit.piece());
    }

    #[tokio::test(start_paused = true)]
    async fn bytes_and_trailers_arrive_intact_and_in_order() {
        let chunks = [
            pattern(300_000),
            Bytes::new(),
            pattern(10),
            pattern(131_072),
        ];
        let mut script = Script::data(&chunks);
        let mut trailers = HeaderMap::new();
        trailers.insert("x-amz-checksum-crc32c", "AAAAAA==".parse().unwrap());
        script.0.push_back(Ok(Frame::trailers(trailers.clone())));
        let start = Instant::now();
        let got = frames(Throttled::new(script, limit(RATE))).await;
        assert_eq!(joined(&got), chunks.concat());
        assert_eq!(
            got.back().unwrap().as_ref().unwrap().trailers_ref(),
            Some(&trailers)
        );
        // Frames are cut, not joined: the last piece is the whole last frame.
        took_time_of(start, chunks.concat().len() - 131_072);
    }

    #[tokio::test(start_paused = true)]
    async fn pieces_never_exceed_piece() {
        let limit = limit(20_000); // pieces of 2500 bytes
        let body = Script::data(&[pattern(7_000), pattern(2_500), pattern(1), pattern(12_345)]);
        let got = sizes(&frames(Throttled::new(body, limit)).await);
        assert_eq!(
            got,
            [2500, 2500, 2000, 2500, 1, 2500, 2500, 2500, 2500, 2345]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn two_bodies_sharing_a_limit_take_the_time_of_their_sum() {
        let (limit, n) = (limit(RATE), 2 << 20);
        let a = Throttled::new(Script::data(&[pattern(n)]), limit.clone());
        let b = Throttled::new(Script::data(&[pattern(n)]), limit.clone());
        let start = Instant::now();
        let (a, b) = tokio::join!(frames(a), frames(b));
        took_time_of(start, 2 * n - limit.piece());
        assert_eq!(
            (joined(&a), joined(&b)),
            (pattern(n).to_vec(), pattern(n).to_vec())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn idle_credit_is_capped_at_one_piece() {
        let (limit, n) = (limit(RATE), 1 << 20);
        tokio::time::sleep(Duration::from_secs(10)).await;
        let start = Instant::now();
        frames(Throttled::new(Script::data(&[pattern(n)]), limit.clone())).await;
        // One piece of credit, one on debt, then the rate.
        took_time_of(start, n - 2 * limit.piece());
    }

    #[tokio::test(start_paused = true)]
    async fn an_error_frame_passes_through() {
        let mut script = Script::data(&[pattern(5000)]);
        script.0.push_back(Err("connection reset"));
        let got = frames(Throttled::new(script, limit(8_000))).await;
        assert_eq!(joined(&got), pattern(5000).to_vec());
        assert_eq!(
            got.back().unwrap().as_ref().err(),
            Some(&"connection reset")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn end_stream_and_size_hint_count_the_held_rest() {
        assert!(Throttled::new(Script::data(&[]), limit(RATE)).is_end_stream());
        let mut body = Throttled::new(Script::data(&[pattern(3000)]), limit(8_000));
        assert!(!body.is_end_stream());
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first.len(), 1024);
        // The inner body is at its end; the rest is held here.
        assert!(!body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(3000 - 1024));
        while body.frame().await.is_some() {}
        assert!(body.is_end_stream() && body.size_hint().exact() == Some(0));
    }

    #[test]
    fn types_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<(Bandwidth, Throttled<Script>)>();
    }
}
