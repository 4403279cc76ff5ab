// The suite's harness, the same for object_store 0.13 and 0.14: included by
// `integration_suite_0_13.rs` and `integration_suite_0_14.rs`, each of which brings its
// version's `object_store` in as `object_store` and lists its version's suite functions
// (`suite()`, `on_local_s3!`).
use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use object_store::aws::AmazonS3;
use object_store::integration::*;
use object_store::list::PaginatedListStore;
use object_store::multipart::MultipartStore;
use object_store::{Error, ObjectStore};
use s3_wire_object_store::S3WireStore;
use support::Server;

/// Which backend a run is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    S3Wire,
    AmazonS3,
}

/// A store the whole suite can run against.
trait SuiteStore: ObjectStore + MultipartStore + PaginatedListStore {
    const BACKEND: Backend;
    fn make(server: &Server, bucket: &str) -> impl Future<Output = Self> + Send;
}

impl SuiteStore for S3WireStore {
    const BACKEND: Backend = Backend::S3Wire;
    async fn make(server: &Server, bucket: &str) -> Self {
        // local-s3 echoes `encoding-type=url` but sends keys unencoded (the suite's keys
        // with `%` would be decoded twice); moto encodes them as S3 does.
        server.s3_wire(bucket, server.is_moto()).await
    }
}

impl SuiteStore for AmazonS3 {
    const BACKEND: Backend = Backend::AmazonS3;
    async fn make(server: &Server, bucket: &str) -> Self {
        reference_for_suite(server.amazon_s3_builder(bucket).await)
            .build()
            .expect("AmazonS3")
    }
}

type SuiteFn<S> = fn(Arc<S>) -> BoxFuture<'static, ()>;

/// The functions of `object_store::integration` both 0.13.2 and 0.14.2 have, in their order,
/// with the arguments object_store's own S3 test gives them.
fn suite_of_both_versions<S: SuiteStore>() -> Vec<(&'static str, SuiteFn<S>)> {
    vec![
        ("put_get_delete_list", |s| {
            async move { put_get_delete_list(&*s).await }.boxed()
        }),
        ("put_get_attributes", |s| {
            async move { put_get_attributes(&*s).await }.boxed()
        }),
        ("get_opts", |s| async move { get_opts(&*s).await }.boxed()),
        ("put_opts", |s| {
            async move { put_opts(&*s, true).await }.boxed()
        }),
        ("stream_get", |s| {
            async move { stream_get(&*s).await }.boxed()
        }),
        ("list_uses_directories_correctly", |s| {
            async move { list_uses_directories_correctly(&*s).await }.boxed()
        }),
        ("list_with_delimiter", |s| {
            async move { list_with_delimiter(&*s).await }.boxed()
        }),
        ("get_nonexistent_object", |s| {
            async move {
                let error = get_nonexistent_object(&*s, None).await.unwrap_err();
                assert!(matches!(error, Error::NotFound { .. }), "{error}");
            }
            .boxed()
        }),
        ("rename_and_copy", |s| {
            async move { rename_and_copy(&*s).await }.boxed()
        }),
        ("copy_if_not_exists", |s| {
            async move { copy_if_not_exists(&*s).await }.boxed()
        }),
        ("copy_rename_nonexistent_object", |s| {
            async move { copy_rename_nonexistent_object(&*s).await }.boxed()
        }),
        ("multipart", |s| {
            async move { multipart(&*s, &*s).await }.boxed()
        }),
        ("multipart_race_condition", |s| {
            async move { multipart_race_condition(&*s, true).await }.boxed()
        }),
        ("multipart_out_of_order", |s| {
            async move { multipart_out_of_order(&*s).await }.boxed()
        }),
        ("list_paginated", |s| {
            async move { list_paginated(&*s, &*s).await }.boxed()
        }),
        ("list_with_offset_exclusivity", |s| {
            async move { list_with_offset_exclusivity(&*s).await }.boxed()
        }),
    ]
}

/// A function that cannot pass on a server: the feature it lacks, and the failures of the
/// suite it leads to there (any one of them: a race can end either way).
#[derive(Debug, Clone, Copy)]
struct Gap {
    lacks: &'static str,
    fails_with: &'static [&'static str],
    /// A race the suite provokes: it may also end the way the suite wants.
    may_pass: bool,
}

/// What only object_store's HTTP stack can do (any server).
const NO_OBJECT_STORE_HTTP_STACK: Gap = Gap {
    lacks: "nothing of the server: the suite checks for a marker that only object_store's \
            own HttpConnector middleware inserts (a private type), and S3WireStore sends \
            its requests with s3-wire's client",
    fails_with: &["PutResult should contain the response extensions"],
    may_pass: false,
};

/// s3s-fs: a GET of a key that is a prefix of other keys ("a directory") answers 500, not
/// 404 (keys are files); the suite's first such GET is of `test_dir`.
const DIRECTORY_KEY_IS_500: Gap = Gap {
    lacks: "a 404 for a key that is a directory of other keys (s3s-fs answers 500 InternalError)",
    fails_with: &["InternalError"],
    may_pass: false,
};

/// s3s-fs: GetObject and HeadObject ignore `If-Unmodified-Since` (and the other conditions):
/// 200 where 412 is due.
const GET_CONDITIONS_IGNORED: Gap = Gap {
    lacks: "conditional GetObject/HeadObject (If-Match, If-None-Match, If-Modified-Since, \
            If-Unmodified-Since are ignored: 200 where 412 or 304 is due)",
    fails_with: &["Ok(GetResult {"],
    may_pass: false,
};

/// s3s-fs: a conditional PutObject (`If-Match`) is not atomic: the suite's five writers
/// racing on one ETag all succeed. AmazonS3 then counts lost updates; s3-wire, which
/// verifies every GET's checksum, already finds an object whose bytes and stored checksum
/// are of two different writers (s3s-fs writes them separately).
const CONDITIONAL_PUT_NOT_ATOMIC: Gap = Gap {
    lacks: "atomic conditional PutObject (racing If-Match writes all succeed)",
    fails_with: &["assertion `left == right` failed", "ChecksumMismatch"],
    may_pass: true,
};

/// s3s-fs: DeleteObject leaves the object's stored checksum behind, and a multipart upload
/// stores none, so an object completed later under that key is served with the deleted
/// object's checksum. s3-wire verifies it and refuses the bytes; AmazonS3 checks no
/// checksums and passes.
const STALE_CHECKSUM_AFTER_DELETE: Gap = Gap {
    lacks: "dropping an object's checksum with the object (a deleted object's checksum is \
            served with the next multipart object under its key)",
    fails_with: &["ChecksumMismatch"],
    may_pass: false,
};

/// The functions local-s3 (s3s-fs 0.14.1) cannot support, per backend.
fn local_s3_gap(function: &str, backend: Backend) -> Option<Gap> {
    match (function, backend) {
        ("put_get_delete_list", _) => Some(DIRECTORY_KEY_IS_500),
        ("get_opts", _) => Some(GET_CONDITIONS_IGNORED),
        ("put_opts", _) => Some(CONDITIONAL_PUT_NOT_ATOMIC),
        ("copy_if_not_exists", Backend::S3Wire) => Some(STALE_CHECKSUM_AFTER_DELETE),
        ("response_extensions", Backend::S3Wire) => Some(NO_OBJECT_STORE_HTTP_STACK),
        _ => None,
    }
}

/// moto: conditional PutObject (`If-Match`) is not atomic either; the race lost an update
/// in some runs (49 of 50).
const MOTO_CONDITIONAL_PUT_NOT_ATOMIC: Gap = Gap {
    lacks: "atomic conditional PutObject (racing If-Match writes may all succeed)",
    fails_with: &["assertion `left == right` failed"],
    may_pass: true,
};

/// The functions moto cannot support, per backend.
fn moto_gap(function: &str, backend: Backend) -> Option<Gap> {
    match (function, backend) {
        ("put_opts", _) => Some(MOTO_CONDITIONAL_PUT_NOT_ATOMIC),
        ("response_extensions", Backend::S3Wire) => Some(NO_OBJECT_STORE_HTTP_STACK),
        _ => None,
    }
}

/// How one function ended on one backend.
#[derive(Debug)]
enum Outcome {
    Passed,
    /// Failed where the gap says (the panic message).
    KnownGap(String),
    /// Passed although a gap is listed: the table is out of date.
    UnexpectedPass,
    /// Failed otherwise.
    Failed(String),
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "(a panic without a message)".to_owned())
}

/// Runs `function` of the suite on a fresh bucket of `server`, in a task of its own (the
/// suite asserts by panicking).
async fn run_one<S: SuiteStore>(server: &Server, function: &str, gap: Option<Gap>) -> Outcome {
    let (_, run) = suite::<S>()
        .into_iter()
        .find(|(name, _)| *name == function)
        .unwrap_or_else(|| panic!("no suite function {function}"));
    let bucket = format!("suite-{}", function.replace('_', "-"));
    let store = Arc::new(S::make(server, &bucket[..bucket.len().min(63)]).await);
    let ended = tokio::spawn(run(store)).await;
    match (ended, gap) {
        (Ok(()), None) => Outcome::Passed,
        (Ok(()), Some(gap)) if gap.may_pass => Outcome::Passed,
        (Ok(()), Some(_)) => Outcome::UnexpectedPass,
        (Err(join), gap) => {
            let message = panic_message(join.into_panic());
            match gap {
                Some(gap) if gap.fails_with.iter().any(|m| message.contains(m)) => {
                    Outcome::KnownGap(message)
                }
                _ => Outcome::Failed(message),
            }
        }
    }
}

fn assert_outcome(
    function: &str,
    backend: Backend,
    server: &str,
    gap: Option<Gap>,
    outcome: &Outcome,
) {
    match outcome {
        Outcome::Passed => {}
        Outcome::KnownGap(message) => eprintln!(
            "{function} on {backend:?}/{server}: fails as listed, the server lacks {}: {message}",
            gap.map(|g| g.lacks).unwrap_or_default()
        ),
        Outcome::UnexpectedPass => panic!(
            "{function} on {backend:?}/{server} passed although listed as a gap ({}): update the table",
            gap.map(|g| g.lacks).unwrap_or_default()
        ),
        Outcome::Failed(message) => {
            panic!("{function} on {backend:?}/{server} failed: {message}")
        }
    }
}

async fn on_local_s3<S: SuiteStore>(function: &str) {
    let server = support::local_s3().await;
    let gap = local_s3_gap(function, S::BACKEND);
    let outcome = run_one::<S>(&server, function, gap).await;
    assert_outcome(function, S::BACKEND, "local-s3", gap, &outcome);
}

/// One test per suite function and backend, so each shows up by name in the test output.
macro_rules! on_local_s3 {
    ($($function:ident),* $(,)?) => {
        mod s3_wire_on_local_s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $function() {
                    super::on_local_s3::<s3_wire_object_store::S3WireStore>(stringify!($function)).await;
                }
            )*
        }
        mod amazon_s3_on_local_s3 {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $function() {
                    super::on_local_s3::<object_store::aws::AmazonS3>(stringify!($function)).await;
                }
            )*
        }

        /// The lists above name every function of the suite.
        #[test]
        fn every_suite_function_has_a_test() {
            let tested = [$(stringify!($function)),*];
            let all: Vec<_> = suite::<S3WireStore>().into_iter().map(|(name, _)| name).collect();
            assert_eq!(tested.to_vec(), all);
        }
    };
}


/// The whole suite on moto, for both backends: the functions local-s3 cannot support run
/// here against a server that has what they need.
async fn whole_suite_on_moto<S: SuiteStore>() {
    let server = support::moto().await;
    let mut failures = Vec::new();
    for (function, _) in suite::<S>() {
        let gap = moto_gap(function, S::BACKEND);
        let outcome = run_one::<S>(&server, function, gap).await;
        eprintln!("{function} on {:?}/moto: {outcome:?}", S::BACKEND);
        if matches!(outcome, Outcome::Failed(_) | Outcome::UnexpectedPass) {
            failures.push((function, outcome));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_wire_whole_suite_on_moto() {
    whole_suite_on_moto::<S3WireStore>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amazon_s3_whole_suite_on_moto() {
    whole_suite_on_moto::<AmazonS3>().await;
}
