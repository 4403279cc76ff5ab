#![doc = include_str!("../README.md")]
//!
//! # The documented S3 PUT example
//!
//! ```
//! use s3_sigv4::{Credentials, PayloadHash, Signer, SigningParams, SigningTime};
//!
//! // One signer per client; it is `Send + Sync` and caches signing keys.
//! let signer = Signer::new();
//! let credentials = Credentials::new("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None);
//! // The caller reads the clock (e.g. `SigningTime::from_system_time(SystemTime::now())`).
//! let time = SigningTime::from_parts(2013, 5, 24, 0, 0, 0)?;
//! let body = b"Welcome to Amazon S3.";
//! let mut request = http::Request::put("https://examplebucket.s3.amazonaws.com/test$file.text")
//!     .header("date", "Fri, 24 May 2013 00:00:00 GMT")
//!     .header("x-amz-storage-class", "REDUCED_REDUNDANCY")
//!     .body(&body[..])?;
//! let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::of(body));
//! signer.sign_headers(&mut request, &credentials, &params)?;
//! assert_eq!(
//!     request.headers()["authorization"],
//!     "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
//!      SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, \
//!      Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod canonical;
mod chunked;
mod credentials;
mod encoding;
mod error;
#[cfg(test)]
mod fuzz_tests;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod header;
mod key;
mod params;
mod post_policy;
mod request;
mod sha256;
mod signer;
mod time;
#[cfg(feature = "sigv4a")]
mod v4a;

/// The `http` crate this signer works on, re-exported so callers use the same version.
pub use http;

pub use chunked::{
    CHUNK_TERMINATOR, ChunkEncoder, ChunkHeader, ChunkedLayout, MIN_CHUNK_SIZE, StreamingMode,
};
pub use credentials::Credentials;
pub use encoding::{base64_encode, uri_decode, uri_encode, uri_encode_into};
pub use error::{
    Error, InvalidExpiry, InvalidHeader, InvalidParameter, InvalidTime, InvalidUri, StreamingError,
};
pub use header::checked_header;
pub use params::{
    HeaderSelection, PayloadHash, SessionTokenPlacement, SigningAlgorithm, SigningParams,
    SigningSettings, UriRules,
};
pub use post_policy::{PostPolicy, PostPolicyForm};
pub use request::{RawRequest, SignableRequest};
pub use signer::{MAX_PRESIGN_EXPIRY, PresignedRequest, Signature, Signer, SigningReport};
pub use time::SigningTime;

#[cfg(test)]
mod send_sync {
    fn assert_send_sync<T: Send + Sync>() {}
    #[test]
    fn signer_is_shareable() {
        assert_send_sync::<crate::Signer>();
        assert_send_sync::<crate::Credentials>();
        assert_send_sync::<crate::SigningSettings>();
    }
}
