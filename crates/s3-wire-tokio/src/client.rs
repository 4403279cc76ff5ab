//! The [`Client`] and its request pipeline: encode (s3-ops) → sign (s3-sigv4)
//! → send (reqwest) → decode (s3-ops), with retries, redirects and timeouts.

use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, SystemTime};

use http::StatusCode;
use http::header::{HeaderMap, HeaderValue};
use http::response::Parts;
use s3_ops::ops::create_session::{CreateSession, SessionMode};
use s3_ops::{
    ChecksumAlgorithm, Endpoint, IntegrityDefaults, Operation, OperationRequest, ProviderQuirks,
    RequestExtras, RetryClass, SigningScope,
};
use s3_sigv4::Credentials;
use tokio::time::Instant;

use crate::bandwidth::{Bandwidth, Throttled};
use crate::body::Body;
use crate::credentials::CredentialsProvider;
use crate::error::{Error, ErrorKind, TimeoutKind, request_id};
use crate::express::{CreateSessions, ExpressSessions};
use crate::hooks::{Counted, Direction, Recorder, RequestHook};
use crate::memory::{MemoryBudget, MemoryUsage};
use crate::object_body::{BodyLimits, ObjectBody};
use crate::retry::{Jitter, RetryBudget, RetryConfig, RetryCost, parse_retry_after};
use crate::settings::{Timeouts, TransferOptions, TransferSettings};
use crate::sign::{Digests, PayloadCache, PayloadSigning, Signer, hashed_ahead, unsigned_allowed};
use crate::stall::{Active, Activity};
use crate::trace;
use crate::transport::{self, HttpClients, Transport};

/// An async S3 client.
///
/// Cloning is cheap (an `Arc`): clones share one connection pool, one signer
/// (with its signing-key cache), one credentials provider and one retry
/// budget.
///
/// ```no_run
/// use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
/// use s3_wire_tokio::{bucket, key};
///
/// # async fn demo() -> Result<(), s3_wire_tokio::Error> {
/// let client = s3_wire_tokio::Client::from_env()?;
/// let head = client
///     .head_object(HeadObject::new(bucket("my-bucket")?, key("reports/2024.csv")?))
///     .await?;
/// println!("{:?} bytes", head.content_length);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
    /// What this view of the client adds to every request, over the client's own defaults
    /// (see [`Client::with_request_extras`]); `None`: the defaults.
    extras: Option<Arc<RequestExtras>>,
}

pub(crate) struct Inner {
    /// The caller's own (`ClientBuilder::http_client`, whose redirects are caught after
    /// the fact) or built from the configuration.
    http: HttpClients,
    pub(crate) endpoint: Endpoint,
    /// `None`: anonymous, nothing is signed.
    pub(crate) credentials: Option<Arc<dyn CredentialsProvider>>,
    /// What every request carries (requester pays, headers, query parameters).
    extras: RequestExtras,
    /// S3 Express One Zone sessions, per directory bucket.
    express: ExpressSessions,
    pub(crate) signer: Signer,
    timeouts: Timeouts,
    retry: RetryConfig,
    budget: RetryBudget,
    jitter: Jitter,
    /// The defaults of managed transfers.
    pub(crate) transfer_options: TransferOptions,
    /// The memory all managed transfers of the client may hold.
    pub(crate) transfer_memory: Arc<MemoryBudget>,
    /// The bandwidth limits of sending and of receiving.
    pub(crate) bandwidth: Option<(Arc<Bandwidth>, Arc<Bandwidth>)>,
    /// What uploads carry and downloads verify by default.
    pub(crate) integrity: IntegrityDefaults,
    /// Told about every attempt (`ClientBuilder::request_hook`).
    hook: Option<Arc<dyn RequestHook>>,
    /// The store's profile: every request is adapted to it before signing.
    pub(crate) quirks: ProviderQuirks,
    /// The profile of requests to S3 Express One Zone directory buckets.
    express_quirks: ProviderQuirks,
    /// How payloads are protected over plain HTTP.
    pub(crate) payload_signing: PayloadSigning,
    /// What the store turned out not to serve, found at run time.
    pub(crate) learnt: crate::learnt::Learnt,
}

impl CreateSessions for Inner {
    fn create_session(
        self: Arc<Self>,
        create: CreateSession,
    ) -> Pin<Box<dyn Future<Output = Result<<CreateSession as Operation>::Output, Error>> + Send>>
    {
        Box::pin(async move { Client::from_inner(self).send_ref(&create).await })
    }
}

/// Whether `error` is how a store refuses a signed aws-chunked trailer: `400` with a code
/// that names the request rather than its bytes (`InvalidRequest`, Garage's "Invalid payload
/// signature"; `InvalidArgument`; `NotImplemented`), or `501`. A `BadDigest` or a signature
/// mismatch says something else.
fn refuses_trailer(error: &Error) -> bool {
    error.service_error().is_some_and(|e| {
        e.status == http::StatusCode::NOT_IMPLEMENTED
            || (e.status == http::StatusCode::BAD_REQUEST
                && matches!(
                    e.code.as_str(),
                    "InvalidRequest" | "InvalidArgument" | "NotImplemented"
                ))
    })
}

/// Why [`Client::retry_permit`] refused another try.
pub(crate) enum RetryDenied {
    /// `max_attempts` tries were made.
    Attempts,
    /// The client's retry budget is spent.
    Budget,
}

/// An operation that succeeded: its output, the requests it made in all, and whether an
/// earlier attempt may have taken effect without its answer arriving.
pub(crate) struct Completed<T> {
    pub(crate) output: T,
    pub(crate) attempts: u32,
    pub(crate) outcome_unknown: bool,
}

/// What an attempt's response decoder gets: the head and the unread body.
pub(crate) struct RawResponse {
    pub(crate) head: Parts,
    pub(crate) body: ObjectBody,
}

impl Client {
    // One caller (`ClientBuilder::build`), which hands over each part it resolved.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        endpoint: Endpoint,
        credentials: Option<Arc<dyn CredentialsProvider>>,
        transport: Transport,
        timeouts: Timeouts,
        retry: RetryConfig,
        transfers: TransferSettings,
        integrity: IntegrityDefaults,
        quirks: ProviderQuirks,
        extras: RequestExtras,
        express_session_mode: SessionMode,
        hook: Option<Arc<dyn RequestHook>>,
        payload_signing: PayloadSigning,
    ) -> Result<Self, Error> {
        let http = HttpClients::new(transport)?;
        let options = transfers.options;
        let memory = transfers.memory.unwrap_or_else(|| {
            options
                .part_size
                .saturating_mul(options.concurrency.max(1) as u64)
        });
        let bandwidth = transfers
            .bandwidth
            .and_then(std::num::NonZeroU64::new)
            .map(|rate| {
                (
                    Arc::new(Bandwidth::new(rate)),
                    Arc::new(Bandwidth::new(rate)),
                )
            });
        Ok(Self {
            extras: None,
            inner: Arc::new(Inner {
                http,
                endpoint,
                credentials,
                extras,
                express: ExpressSessions::new(express_session_mode),
                signer: Signer::new(),
                timeouts,
                budget: RetryBudget::new(&retry),
                retry,
                jitter: Jitter::new(),
                transfer_options: options,
                transfer_memory: Arc::new(MemoryBudget::new(memory)),
                bandwidth,
                integrity,
                quirks,
                express_quirks: s3_ops::Provider::S3Express.quirks(),
                hook,
                payload_signing,
                learnt: crate::learnt::Learnt::default(),
            }),
        })
    }

    /// The client itself, as a view with no extras of its own.
    pub(crate) fn from_inner(inner: Arc<Inner>) -> Self {
        Self {
            inner,
            extras: None,
        }
    }

    /// A view of this client whose every request also carries `extras` (requester pays,
    /// headers, query parameters), on top of the client's own
    /// ([`ClientBuilder::request_payer`](crate::ClientBuilder::request_payer), [`ClientBuilder::request_extras`](crate::ClientBuilder::request_extras); the view's
    /// win where both set one). The view shares everything else (connection pool,
    /// credentials, memory budget, retry budget) and is as cheap to make as a clone;
    /// every operation and managed transfer run through it carries the extras.
    ///
    /// ```no_run
    /// use s3_wire_tokio::s3_ops::{GetObject, RequestExtras};
    /// use s3_wire_tokio::{Client, bucket, key};
    ///
    /// # async fn demo(client: Client) -> Result<(), s3_wire_tokio::Error> {
    /// // A Requester Pays bucket: this caller pays for the request and the download.
    /// let payer = client.with_request_extras(RequestExtras::new().request_payer(true));
    /// let scene = payer
    ///     .get_object(GetObject::new(bucket("usgs-landsat")?, key("collection02/index.html")?))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn with_request_extras(&self, extras: RequestExtras) -> Client {
        let base = self.extras.as_deref().unwrap_or(&self.inner.extras);
        Client {
            inner: self.inner.clone(),
            extras: Some(Arc::new(base.merged(&extras))),
        }
    }

    /// What every request of this client (view) carries.
    pub(crate) fn request_extras(&self) -> &RequestExtras {
        self.extras.as_deref().unwrap_or(&self.inner.extras)
    }

    /// Whether requests are sent unsigned ([`ClientBuilder::anonymous`](crate::ClientBuilder::anonymous)).
    pub fn is_anonymous(&self) -> bool {
        self.inner.credentials.is_none()
    }

    /// What this client's managed transfers hold in memory now, the most they ever held,
    /// and the limit (see [`ClientBuilder::transfer_memory`](crate::ClientBuilder::transfer_memory)).
    pub fn transfer_memory(&self) -> MemoryUsage {
        self.inner.transfer_memory.usage()
    }

    /// The endpoint requests are sent to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.inner.endpoint
    }

    /// The profile of the store this client adapts its requests to (see
    /// [`ClientBuilder::provider`](crate::ClientBuilder::provider)).
    pub fn provider_quirks(&self) -> &ProviderQuirks {
        &self.inner.quirks
    }

    /// Whether `bucket` lists its keys in key order: the client's store profile says, and a
    /// directory bucket (S3 Express One Zone) never does.
    pub(crate) fn lists_in_key_order(&self, bucket: &s3_ops::BucketName) -> bool {
        let express = bucket.is_s3_express();
        self.inner.quirks.listings_in_key_order
            && (!express || self.inner.express_quirks.listings_in_key_order)
    }

    /// The defaults of this client's managed transfers, as fitted to the store's limits.
    pub fn transfer_options(&self) -> TransferOptions {
        self.inner.transfer_options
    }

    /// The signing region.
    pub fn region(&self) -> &str {
        self.inner.endpoint.region()
    }

    /// The time limits.
    pub fn timeouts(&self) -> Timeouts {
        self.inner.timeouts
    }

    /// Runs an operation whose response is decoded in memory by
    /// [`Operation::response`].
    pub(crate) async fn send_ref<O: Operation>(&self, op: &O) -> Result<O::Output, Error> {
        self.send_with_body(op, None).await
    }

    pub(crate) async fn send_with_body<O: Operation>(
        &self,
        op: &O,
        upload: Option<&Body>,
    ) -> Result<O::Output, Error> {
        self.execute(op, upload, |response| decode_buffered(op, response))
            .await
    }

    /// Like [`Client::send_ref`], also saying whether an earlier attempt's answer was lost
    /// (the store may have acted on it too; see [`Error::outcome_unknown`]).
    pub(crate) async fn send_telling<O: Operation>(
        &self,
        op: &O,
    ) -> Result<(O::Output, bool), Error> {
        let done = self
            .execute_counted(op, None, 0, |response| decode_buffered(op, response))
            .await?;
        Ok((done.output, done.outcome_unknown))
    }

    /// The request pipeline with retries. `decode` turns each attempt's
    /// response into the output or an error; its errors are classified for
    /// retry like any other.
    pub(crate) async fn execute<O, T, F, D>(
        &self,
        op: &O,
        upload: Option<&Body>,
        decode: D,
    ) -> Result<T, Error>
    where
        O: Operation,
        D: FnMut(RawResponse) -> F,
        F: Future<Output = Result<T, Error>>,
    {
        Ok(self.execute_counted(op, upload, 0, decode).await?.output)
    }

    /// [`Client::execute`] for an operation that already made `tries_before` requests (a
    /// body's continuation): its tries count on from there, within the same
    /// `max_attempts`. Tells with the output how many requests were made in all and
    /// whether an earlier attempt's answer was lost.
    pub(crate) async fn execute_counted<O, T, F, D>(
        &self,
        op: &O,
        upload: Option<&Body>,
        tries_before: u32,
        decode: D,
    ) -> Result<Completed<T>, Error>
    where
        O: Operation,
        D: FnMut(RawResponse) -> F,
        F: Future<Output = Result<T, Error>>,
    {
        let attempts = self.attempts(op, upload, tries_before, decode);
        trace::in_operation_span(op.name(), attempts).await
    }

    /// [`Client::execute_counted`]'s loop of attempts, retries and backoffs. What follows a
    /// failed attempt is decided by [`Client::after_failure`], compiled once.
    async fn attempts<O, T, F, D>(
        &self,
        op: &O,
        upload: Option<&Body>,
        tries_before: u32,
        mut decode: D,
    ) -> Result<Completed<T>, Error>
    where
        O: Operation,
        D: FnMut(RawResponse) -> F,
        F: Future<Output = Result<T, Error>>,
    {
        let inner = &self.inner;
        let started = Instant::now();
        let deadline = inner
            .timeouts
            .operation
            .map(|limit| (started + limit, limit));
        let mut state = AttemptsState {
            endpoint: None,
            attempts: tries_before,
            retry_tokens: 0,
            payload_cache: PayloadCache::for_upload(upload),
            outcome_unknown: false,
            credentials_renewed: false,
            wide_heads: false,
            trailer_refused: false,
        };
        loop {
            state.attempts += 1;
            let target = state.endpoint.as_ref().unwrap_or(&inner.endpoint);
            let attempt_started = Instant::now();
            let mut sent = trace::Sent::default();
            let recorder = inner
                .hook
                .as_ref()
                .map(|hook| Recorder::start(hook, op.name(), state.attempts, attempt_started));
            let attempt = self.attempt(
                op,
                target,
                upload,
                &mut state.payload_cache,
                deadline,
                &mut sent,
                recorder.as_ref(),
                state.wide_heads,
            );
            let result = match deadline {
                Some((at, limit)) => match tokio::time::timeout_at(at, attempt).await {
                    Ok(result) => result,
                    Err(_) => Err(Attempted::failed(Error::timeout(TimeoutKind::Operation(
                        limit,
                    )))),
                },
                None => attempt.await,
            };
            let (error, retry_after) = match result {
                Ok(response) => match decode(response).await {
                    Ok(output) => {
                        sent.finished(state.attempts, attempt_started, None);
                        inner.budget.on_success(state.retry_tokens);
                        return Ok(Completed {
                            output,
                            attempts: state.attempts,
                            outcome_unknown: state.outcome_unknown,
                        });
                    }
                    Err(error) => (error, None),
                },
                Err(Attempted { error, retry_after }) => (error, retry_after),
            };
            sent.finished(state.attempts, attempt_started, Some(&error));
            if let Some(recorder) = &recorder {
                recorder.finish(Some(error.kind()));
            }
            let failed = Failed {
                error,
                retry_after,
                idempotent: op.is_idempotent(),
                addressed_by_bucket: &|target| addressed_by_bucket(op, target),
            };
            match self.after_failure(&mut state, failed, upload, deadline)? {
                Next::Again => {}
                Next::After(delay) => tokio::time::sleep(delay).await,
            }
        }
    }

    /// After a failed attempt: the error to return, or when to try again (at once, after a
    /// region redirect, or after a backoff).
    fn after_failure(
        &self,
        state: &mut AttemptsState,
        failed: Failed<'_>,
        upload: Option<&Body>,
        deadline: Option<(Instant, Duration)>,
    ) -> Result<Next, Error> {
        let inner = &self.inner;
        let Failed {
            mut error,
            retry_after,
            idempotent,
            addressed_by_bucket,
        } = failed;
        let target = state.endpoint.as_ref().unwrap_or(&inner.endpoint);
        error.set_attempts(state.attempts);
        state.outcome_unknown |= is_ambiguous(&error)
            || matches!(error.kind(), ErrorKind::Timeout(TimeoutKind::Operation(_)));
        error.set_outcome_unknown(state.outcome_unknown);

        let class = error.retry_class();
        if let RetryClass::RedirectRegion { region } = &class {
            // Followed once, for AWS endpoints only; the request is rebuilt
            // and re-signed for the new host, so no signed header of the
            // old request travels to it. Never for a Multi-Region Access
            // Point: its one global host serves every region.
            if state.endpoint.is_none()
                && target.is_aws()
                && region != target.region()
                && !addressed_by_bucket(target)
            {
                state.endpoint = Some(target.clone().with_region(region)?);
                state.attempts -= 1;
                return Ok(Next::Again);
            }
            return Err(error);
        }
        if !state.wide_heads
            && !inner.http.is_given()
            && transport::is_head_too_large(&error)
            && idempotent
            && upload.is_none_or(Body::can_resend)
        {
            // Sent again at once through the client that reads up to 1,024 header
            // fields (`HttpClients`); not a failure of the store, so no retry budget.
            state.wide_heads = true;
            return Ok(Next::Again);
        }
        if !state.trailer_refused
            && state.payload_cache.sent_signed_trailer()
            && refuses_trailer(&error)
        {
            // The store does not take signed trailers (Garage 2.5.0): this client no
            // longer sends them. Sent again at once without it where the body allows (the
            // store answered before any of a one-shot stream was read), else an error
            // that says so; no retry budget (nothing is wrong with the store's health).
            state.trailer_refused = true;
            inner.learnt.set_refuses_signed_trailers();
            if upload.is_none_or(Body::can_resend) {
                return Ok(Next::Again);
            }
            let feature = s3_ops::provider::Feature::SignedTrailer;
            let unsupported = inner.quirks.unsupported_error(feature);
            return Err(Error::caused_by(ErrorKind::Operation(unsupported), error));
        }
        if class == RetryClass::RefreshCredentials {
            // One immediate retry, signed with the provider's new credentials; it does
            // not take from the retry budget (nothing is wrong with the store).
            if state.credentials_renewed || !upload.is_none_or(Body::can_resend) {
                return Err(error);
            }
            state.credentials_renewed = true;
            return Ok(Next::Again);
        }
        if !class.is_retryable()
            || !upload.is_none_or(Body::can_resend)
            || (is_ambiguous(&error) && !idempotent)
        {
            return Err(error);
        }
        let cost = if matches!(
            error.kind(),
            ErrorKind::Timeout(_) | ErrorKind::Transport(_)
        ) {
            RetryCost::Timeout
        } else {
            RetryCost::Normal
        };
        let (mut delay, tokens) = match self.retry_permit(state.attempts, cost) {
            Ok(permit) => permit,
            Err(RetryDenied::Attempts) => return Err(error),
            Err(RetryDenied::Budget) => {
                error.set_budget_exhausted();
                return Err(error);
            }
        };
        state.retry_tokens += tokens;
        if let Some(server_delay) = retry_after {
            if deadline.is_none() && server_delay > inner.retry.max_delay {
                return Err(error);
            }
            delay = delay.max(server_delay);
        }
        // A server's delay may be beyond what an `Instant` holds: that is past any deadline.
        if let Some((at, _)) = deadline
            && Instant::now()
                .checked_add(delay)
                .is_none_or(|end| end >= at)
        {
            return Err(error);
        }
        Ok(Next::After(delay))
    }

    /// How this client's payloads are protected over plain HTTP: as configured, but an
    /// anonymous request has no signature to cover its payload, so its checksum carries the
    /// integrity, as over TLS.
    pub(crate) fn payload_signing(&self) -> PayloadSigning {
        if self.inner.credentials.is_none() {
            PayloadSigning::UnsignedWithChecksum
        } else {
            self.inner.payload_signing
        }
    }

    /// Whether this client signs an upload's payload by its SHA-256 (`checksummed`: the
    /// payload carries a checksum): over plain HTTP, unless a checksummed payload may go
    /// unsigned there ([`unsigned_allowed`]).
    pub(crate) fn signs_payloads(&self, checksummed: bool) -> bool {
        !unsigned_allowed(&self.inner.endpoint, self.payload_signing(), checksummed)
    }

    /// The digests an in-memory upload body gets ahead, in one pass: its `algorithm`
    /// checksum, and its SHA-256 where the payload is signed.
    pub(crate) fn upload_digests(&self, algorithm: Option<ChecksumAlgorithm>) -> Digests {
        Digests::new(self.signs_payloads(algorithm.is_some()), algorithm)
    }

    /// Whether the request of a file part hashes the part before sending it
    /// ([`hashed_ahead`]): the part is then read twice, unless it is read whole into memory
    /// first.
    pub(crate) fn hashes_file_parts_ahead(&self, checksummed: bool) -> bool {
        let (endpoint, quirks) = (&self.inner.endpoint, &self.inner.quirks);
        hashed_ahead(endpoint, self.payload_signing(), quirks, checksummed)
    }

    /// Leave for one more try after `tries` tries (of an operation, or of a body
    /// resumed after it broke off): the backoff to wait and the retry-budget tokens
    /// taken at `cost`, or why not.
    pub(crate) fn retry_permit(
        &self,
        tries: u32,
        cost: RetryCost,
    ) -> Result<(Duration, u32), RetryDenied> {
        let inner = &*self.inner;
        if tries >= inner.retry.max_attempts {
            return Err(RetryDenied::Attempts);
        }
        let tokens = inner.budget.try_acquire(cost).ok_or(RetryDenied::Budget)?;
        Ok((inner.retry.backoff(tries, inner.jitter.unit()), tokens))
    }

    /// The try that [`Client::retry_permit`] allowed succeeded: its tokens go back.
    pub(crate) fn retry_succeeded(&self, tokens: u32) {
        self.inner.budget.on_success(tokens);
    }

    /// One attempt: build, sign and send the request; return the response head
    /// with its unread body, or decode the error response.
    ///
    /// Only encoding the request and decoding an error depend on the operation's type: the
    /// rest ([`Client::send_encoded`], [`Client::attempt_failed`]) is compiled once, not
    /// once per operation type and per crate that sends it.
    #[allow(clippy::too_many_arguments)]
    async fn attempt<O: Operation>(
        &self,
        op: &O,
        endpoint: &Endpoint,
        upload: Option<&Body>,
        payload_cache: &mut PayloadCache,
        deadline: Option<(Instant, Duration)>,
        sent: &mut trace::Sent,
        recorder: Option<&Arc<Recorder>>,
        wide_heads: bool,
    ) -> Result<RawResponse, Attempted> {
        let encoded = op
            .request(endpoint)
            .map_err(|e| Attempted::failed(e.into()))?;
        let answer = self
            .send_encoded(
                encoded,
                endpoint,
                upload,
                payload_cache,
                deadline,
                sent,
                recorder,
                wide_heads,
            )
            .await?;
        match answer {
            Answer::Success(response) => Ok(response),
            Answer::Failure(response, context) => {
                let decoded = decode_buffered(op, response).await;
                Err(self.attempt_failed(decoded, *context))
            }
        }
    }

    /// [`Client::attempt`] from the encoded request on. Boxed: a future awaited by generic
    /// code would otherwise be compiled again into every codegen unit (and crate) that
    /// instantiates the caller; one allocation per attempt is nothing beside a request.
    #[allow(clippy::too_many_arguments)]
    fn send_encoded<'a>(
        &'a self,
        encoded: OperationRequest,
        endpoint: &'a Endpoint,
        upload: Option<&'a Body>,
        payload_cache: &'a mut PayloadCache,
        deadline: Option<(Instant, Duration)>,
        sent: &'a mut trace::Sent,
        recorder: Option<&'a Arc<Recorder>>,
        wide_heads: bool,
    ) -> Pin<Box<dyn Future<Output = Result<Answer, Attempted>> + Send + 'a>> {
        Box::pin(self.send_encoded_here(
            encoded,
            endpoint,
            upload,
            payload_cache,
            deadline,
            sent,
            recorder,
            wide_heads,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    async fn send_encoded_here(
        &self,
        mut encoded: OperationRequest,
        endpoint: &Endpoint,
        upload: Option<&Body>,
        payload_cache: &mut PayloadCache,
        deadline: Option<(Instant, Duration)>,
        sent: &mut trace::Sent,
        recorder: Option<&Arc<Recorder>>,
        wide_heads: bool,
    ) -> Result<Answer, Attempted> {
        let inner = &self.inner;
        let extras = self.request_extras();
        if !extras.is_empty() {
            extras
                .apply(&mut encoded)
                .map_err(|e| Attempted::failed(e.into()))?;
        }
        let payload_signing = self.payload_signing();
        // A directory bucket is S3 Express, whatever store the client is configured for.
        let quirks = &inner
            .learnt
            .apply(if encoded.signing().service() == "s3express" {
                &inner.express_quirks
            } else {
                &inner.quirks
            });
        payload_cache
            .place_checksum(&mut encoded, upload, endpoint, quirks, payload_signing)
            .await
            .map_err(Attempted::failed)?;
        // What the store rejects is changed or refused here, before anything is signed.
        quirks
            .adapt_request(&mut encoded)
            .map_err(|e| Attempted::failed(e.into()))?;
        let signing = encoded.signing().clone();
        let credentials = self
            .signing_credentials(&signing, &mut encoded.request)
            .await
            .map_err(Attempted::failed)?;
        let (mut parts, ()) = encoded.request.into_parts();
        let is_head = parts.method == http::Method::HEAD;
        let payload = payload_cache
            .payload(
                &encoded.body,
                upload,
                &parts.headers,
                endpoint,
                quirks,
                payload_signing,
            )
            .await
            .map_err(Attempted::failed)?;
        let activity = Activity::new();
        if let Some(progress) = upload.and_then(|body| body.progress.as_ref()) {
            // What an earlier attempt sent was not acknowledged: it leaves `in_flight`.
            progress.attempt_started();
        }
        let body = inner
            .signer
            .sign(
                &mut parts,
                credentials.as_ref(),
                endpoint,
                &signing,
                SystemTime::now(),
                payload,
                &encoded.body,
                upload,
                activity.clone(),
            )
            .map_err(Attempted::failed)?;
        let body = match &inner.bandwidth {
            Some((send, _)) => reqwest::Body::wrap(Active::new(
                Throttled::new(body, send.clone()),
                activity.clone(),
            )),
            None => body,
        };
        sent.record(&parts);
        let body = match recorder {
            Some(recorder) => {
                recorder.request(&parts);
                reqwest::Body::wrap(Counted::new(body, recorder.clone(), Direction::Sent))
            }
            None => body,
        };
        let paid_by_requester = parts.headers.contains_key("x-amz-request-payer");
        let signed_path = parts.uri.path().to_owned();
        let request = http::Request::from_parts(parts, body);
        let request = reqwest::Request::try_from(request).map_err(|e| {
            Attempted::failed(
                Error::config("request not accepted by the HTTP client").with_source(e),
            )
        })?;

        let requested_url = if inner.http.is_given() {
            request.url().as_str().to_owned()
        } else {
            String::new()
        };
        if request.url().path() != signed_path {
            // The URL parser resolves `.` and `..` segments (also as `%2E`):
            // the request would reach another object than the key names.
            return Err(Attempted::failed(Error::from(s3_ops::Error::InvalidInput(
                s3_ops::InvalidInput::Parameter {
                    name: "Key",
                    reason: format!(
                        "the HTTP stack would send path {} instead of {signed_path}: keys with \
                         `.` or `..` path segments cannot be addressed",
                        request.url().path()
                    ),
                },
            ))));
        }
        let http = match wide_heads.then(|| inner.http.wide()).flatten() {
            Some(wide) => wide.map_err(Attempted::failed)?,
            None => inner.http.common(),
        };
        let stall = inner.timeouts.stall;
        let response = {
            let send = pin!(http.execute(request));
            let stalled = pin!(activity.stalled(stall));
            let mut send = send;
            let mut stalled = stalled;
            poll_fn(|cx| {
                if let Poll::Ready(result) = send.as_mut().poll(cx) {
                    return Poll::Ready(Some(result));
                }
                stalled.as_mut().poll(cx).map(|()| None)
            })
            .await
        };
        let response = match response {
            Some(Ok(response)) => response,
            Some(Err(error)) => {
                return Err(Attempted::failed(transport::map_error(
                    error,
                    inner.timeouts.connect,
                )));
            }
            None => {
                return Err(Attempted::failed(Error::timeout(TimeoutKind::Stalled(
                    stall,
                ))));
            }
        };

        if inner.http.is_given() && response.url().as_str() != requested_url {
            // The caller's HTTP client followed a redirect: the signed request went to
            // another URL than the one signed for.
            return Err(Attempted::failed(
                Error::new(ErrorKind::Transport(
                    crate::error::TransportErrorKind::Protocol,
                ))
                .with_source(format!(
                    "the HTTP client given to ClientBuilder::http_client followed a redirect \
                         to {}; build it with reqwest::redirect::Policy::none()",
                    response.url().host_str().unwrap_or("another host")
                )),
            ));
        }
        let response: http::Response<reqwest::Body> = response.into();
        let (head, body) = response.into_parts();
        sent.answered(&head);
        let body = match &inner.bandwidth {
            Some((_, receive)) => reqwest::Body::wrap(Throttled::new(body, receive.clone())),
            None => body,
        };
        // HEAD responses and 204/304 carry no body whatever Content-Length says.
        let bodiless = is_head
            || head.status == StatusCode::NO_CONTENT
            || head.status == StatusCode::NOT_MODIFIED;
        let body = match recorder {
            Some(recorder) => {
                recorder.answered(&head, bodiless);
                reqwest::Body::wrap(Counted::new(body, recorder.clone(), Direction::Received))
            }
            None => body,
        };
        let content_length = if bodiless {
            Some(0)
        } else {
            content_length(&head.headers)
        };
        let limits = BodyLimits { stall, deadline };
        let body = ObjectBody::new(body, content_length, limits);
        if head.status.is_success() {
            return Ok(Answer::Success(RawResponse { head, body }));
        }
        // An error response: the operation decodes the S3 error document (bounded).
        let retry_after = head
            .headers
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let context = FailureContext {
            retry_after,
            request_id: request_id(&head.headers),
            signing,
            credentials,
            paid_by_requester,
        };
        Ok(Answer::Failure(
            RawResponse { head, body },
            Box::new(context),
        ))
    }

    /// The error an error response was decoded to (`decoded`), with its request id, a hint
    /// where S3 says nothing more, and rejected credentials dropped.
    fn attempt_failed<T>(&self, decoded: Result<T, Error>, context: FailureContext) -> Attempted {
        let FailureContext {
            retry_after,
            request_id,
            signing,
            credentials,
            paid_by_requester,
        } = context;
        let mut error = match decoded {
            Ok(_) => Error::new(ErrorKind::Transport(
                crate::error::TransportErrorKind::Protocol,
            )),
            Err(error) => error,
        };
        error.set_request_id(request_id);
        if error
            .service_error()
            .is_some_and(|e| e.status == StatusCode::FORBIDDEN && e.code == "AccessDenied")
        {
            // S3 says nothing more specific; these are the two causes a caller can fix here.
            if credentials.is_none() {
                error.set_hint(
                    "the request was unsigned (anonymous client): the bucket or object is not \
                     public, so configure credentials",
                );
            } else if !paid_by_requester {
                error.set_hint(
                    "if the bucket is a Requester Pays bucket, send x-amz-request-payer \
                     (ClientBuilder::request_payer, s3w --request-payer requester)",
                );
            }
        }
        if error.retry_class() == RetryClass::RefreshCredentials {
            // The provider drops these (if still current) so the retry signs with new ones.
            self.invalidate(&signing, &credentials);
        }
        Attempted { error, retry_after }
    }
}

impl Client {
    /// The credentials that sign a request of `scope`: the client's own, or for a directory
    /// bucket its S3 Express session's, whose token then goes into `x-amz-s3session-token`
    /// (S3 Express does not take it as `x-amz-security-token`). `None`: anonymous.
    pub(crate) async fn signing_credentials(
        &self,
        scope: &SigningScope,
        request: &mut http::Request<()>,
    ) -> Result<Option<Credentials>, Error> {
        let Some(provider) = &self.inner.credentials else {
            return Ok(None);
        };
        let credentials_error = |e| Error::new(ErrorKind::Credentials).with_source(e);
        let base = provider.credentials().await.map_err(credentials_error)?;
        let Some(bucket) = scope.express_session() else {
            return Ok(Some(base));
        };
        let session = self
            .inner
            .express
            .credentials(&self.inner, bucket, &base)
            .await
            .map_err(credentials_error)?;
        let token = session.session_token().unwrap_or_default();
        let mut value = HeaderValue::from_str(token).map_err(|_| {
            Error::new(ErrorKind::Credentials)
                .with_source("the session token is not a header value")
        })?;
        value.set_sensitive(true);
        request.headers_mut().insert(S3_SESSION_TOKEN, value);
        Ok(Some(Credentials::new(
            session.access_key_id(),
            session.secret_access_key(),
            None,
        )))
    }

    /// The store refused `rejected` as expired: its source drops them (if still current).
    fn invalidate(&self, scope: &SigningScope, rejected: &Option<Credentials>) {
        let (Some(provider), Some(rejected)) = (&self.inner.credentials, rejected) else {
            return;
        };
        match scope.express_session() {
            None => provider.invalidate(rejected),
            Some(bucket) => self.inner.express.invalidate_session(bucket, rejected),
        }
    }
}

/// Where S3 Express takes the session token of zonal requests.
const S3_SESSION_TOKEN: http::HeaderName = http::HeaderName::from_static("x-amz-s3session-token");

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.inner.endpoint)
            .field("credentials", &self.inner.credentials)
            .field("timeouts", &self.inner.timeouts)
            .field("retry", &self.inner.retry)
            .finish_non_exhaustive()
    }
}

/// Where [`Client::attempts`] stands between attempts.
struct AttemptsState {
    /// Set after a region redirect.
    endpoint: Option<Endpoint>,
    attempts: u32,
    retry_tokens: u32,
    payload_cache: PayloadCache,
    /// Whether an attempt so far may have taken effect without its answer arriving.
    outcome_unknown: bool,
    /// Whether the credentials were renewed after the store refused them as expired.
    credentials_renewed: bool,
    /// Whether a response head had more fields than the common HTTP client reads.
    wide_heads: bool,
    /// Whether an attempt's signed checksum trailer was refused.
    trailer_refused: bool,
}

/// A failed attempt, with what [`Client::after_failure`] needs of its operation.
struct Failed<'a> {
    error: Error,
    retry_after: Option<Duration>,
    idempotent: bool,
    /// [`addressed_by_bucket`] for the operation.
    addressed_by_bucket: &'a dyn Fn(&Endpoint) -> bool,
}

/// What follows a failed attempt that is tried again.
enum Next {
    /// At once.
    Again,
    /// After this backoff.
    After(Duration),
}

/// What one attempt's request was answered with.
enum Answer {
    Success(RawResponse),
    /// An error status: the operation decodes the body, [`Client::attempt_failed`] the rest.
    /// The context is boxed so that a success (the common answer) is not moved at its size.
    Failure(RawResponse, Box<FailureContext>),
}

/// What [`Client::attempt_failed`] needs of the attempt an error response answered.
struct FailureContext {
    retry_after: Option<Duration>,
    request_id: Option<String>,
    signing: SigningScope,
    credentials: Option<Credentials>,
    paid_by_requester: bool,
}

/// A failed attempt with the server's `Retry-After`, if it sent one.
pub(crate) struct Attempted {
    error: Error,
    retry_after: Option<Duration>,
}

impl Attempted {
    fn failed(error: Error) -> Self {
        Self {
            error,
            retry_after: None,
        }
    }
}

/// Reads the whole (bounded) body and decodes it with [`Operation::response`].
pub(crate) async fn decode_buffered<O: Operation>(
    op: &O,
    response: RawResponse,
) -> Result<O::Output, Error> {
    let RawResponse { head, body } = response;
    let limit = op.response_body_limit() as u64;
    if body.content_length().is_some_and(|len| len > limit) {
        return Err(Error::from(s3_ops::Error::MalformedResponse(
            s3_ops::MalformedResponse::Invalid(format!(
                "{} response body of {} bytes exceeds the {limit}-byte limit",
                op.name(),
                body.content_length().unwrap_or(0)
            )),
        )));
    }
    let request_id = request_id(&head.headers);
    let bytes = body.collect_limited(limit).await.map_err(|mut e| {
        e.set_request_id(request_id.clone());
        e
    })?;
    op.response(http::Response::from_parts(head, bytes))
        .map_err(|e| {
            let mut error = Error::from(e);
            error.set_request_id(request_id);
            error
        })
}

/// Whether `op`'s host and signature follow from its bucket rather than from the
/// endpoint's region (a Multi-Region Access Point's region set, an access point ARN's region,
/// a directory bucket's zone, an Object Lambda service), so no other region's host serves it.
fn addressed_by_bucket<O: Operation>(op: &O, endpoint: &Endpoint) -> bool {
    op.request(endpoint).is_ok_and(|request| {
        let scope = request.signing();
        scope.region_set().is_some()
            || scope.service() != "s3"
            || scope.region(endpoint) != endpoint.region()
    })
}

/// Failures after which the server may or may not have acted on the request.
fn is_ambiguous(error: &Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Transport(crate::error::TransportErrorKind::ConnectionDropped)
            | ErrorKind::Timeout(TimeoutKind::Stalled(_))
            | ErrorKind::BodyLength { .. }
    )
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TransportErrorKind;

    #[test]
    fn client_is_send_and_sync() {
        fn is<T: Send + Sync + Clone>() {}
        is::<Client>();
    }

    /// A loopback server that reads a request and writes `answer` on every connection
    /// (until none comes for 2 s); returns its port and, when done, how many connected.
    async fn answering(answer: &'static [u8]) -> (u16, tokio::task::JoinHandle<usize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let mut accepted = 0;
            while let Ok(Ok((mut socket, _))) =
                tokio::time::timeout(Duration::from_secs(2), listener.accept()).await
            {
                accepted += 1;
                let mut buffer = [0u8; 4096];
                let _ = socket.read(&mut buffer).await;
                let _ = socket.write_all(answer).await;
            }
            accepted
        });
        (port, server)
    }

    fn head_object() -> s3_ops::ops::head_object::HeadObject {
        s3_ops::ops::head_object::HeadObject::new(
            s3_ops::BucketName::new("bucket").unwrap(),
            s3_ops::ObjectKey::new("key").unwrap(),
        )
    }

    /// An https endpoint that answers the TLS ClientHello with plain HTTP: a
    /// TLS failure, reported as such and not retried.
    #[tokio::test]
    async fn a_failed_tls_handshake_is_a_tls_error_and_not_retried() {
        let (port, server) =
            answering(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
        let client = Client::builder()
            .endpoint(format!("https://127.0.0.1:{port}"))
            .static_credentials("AKID", "secret", None)
            .build()
            .unwrap();
        let error = client.head_object(head_object()).await.unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::Transport(TransportErrorKind::Tls)),
            "{error:?}"
        );
        assert_eq!(error.attempts(), 1);
        assert_eq!(server.await.unwrap(), 1, "exactly one connection attempt");
    }

    /// A `Retry-After` beyond what an `Instant` can hold, with an operation deadline: the
    /// retry is given up, not a panic (`Instant + Duration` overflowed).
    #[tokio::test]
    async fn a_huge_retry_after_within_a_deadline_gives_up() {
        let (port, server) = answering(
            b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 18446744073709551615\r\n\
              content-length: 0\r\nconnection: close\r\n\r\n",
        )
        .await;
        let client = Client::builder()
            .endpoint(format!("http://127.0.0.1:{port}"))
            .static_credentials("AKID", "secret", None)
            .operation_timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let error = client.head_object(head_object()).await.unwrap_err();
        assert_eq!(error.attempts(), 1, "{error:?}");
        assert_eq!(server.await.unwrap(), 1);
    }
}
