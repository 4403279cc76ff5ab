//! The same S3 request signed by three libraries, for `benches/signing.rs`.
//!
//! Request: `GET https://s3.us-east-1.amazonaws.com/bucket/key%20with%20spaces`,
//! empty body, S3 rules (single encoding, no normalization,
//! `x-amz-content-sha256`), time 2013-05-24T00:00:00Z, region `us-east-1`.
//! rusty-s3 only presigns, so it appears in the presign comparison only.

use std::time::{Duration, SystemTime};

use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SignatureLocation,
    SigningSettings, UriPathNormalizationMode, sign,
};
use aws_smithy_runtime_api::client::identity::Identity;

pub const ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
pub const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
pub const REGION: &str = "us-east-1";
pub const ENDPOINT: &str = "https://s3.us-east-1.amazonaws.com";
pub const BUCKET: &str = "bucket";
pub const KEY: &str = "key with spaces";
pub const URL: &str = "https://s3.us-east-1.amazonaws.com/bucket/key%20with%20spaces";
/// 2013-05-24T00:00:00Z.
pub const UNIX_TIME: u64 = 1_369_353_600;
pub const EXPIRES_IN: Duration = Duration::from_secs(3600);
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

pub fn request() -> http::Request<()> {
    http::Request::get(URL).body(()).expect("valid request")
}

/// s3-sigv4: one shared signer (cached signing key) and prepared credentials.
pub struct S3Sigv4 {
    pub signer: s3_sigv4::Signer,
    pub credentials: s3_sigv4::Credentials,
    pub time: s3_sigv4::SigningTime,
}

impl S3Sigv4 {
    pub fn new() -> Self {
        Self {
            signer: s3_sigv4::Signer::new(),
            credentials: s3_sigv4::Credentials::new(ACCESS_KEY, SECRET_KEY, None),
            time: s3_sigv4::SigningTime::from_unix(UNIX_TIME).expect("valid time"),
        }
    }

    fn params(&self, payload: s3_sigv4::PayloadHash) -> s3_sigv4::SigningParams<'static> {
        s3_sigv4::SigningParams::new(REGION, "s3", self.time, payload)
    }

    /// Header signing; returns nothing (the request carries the result).
    pub fn sign_headers(&self, request: &mut http::Request<()>) {
        let params = self.params(s3_sigv4::PayloadHash::Empty);
        self.signer
            .sign_headers(request, &self.credentials, &params)
            .expect("signs");
    }

    /// Presigned URL.
    pub fn presign(&self, request: &http::Request<()>) -> String {
        let params = self.params(s3_sigv4::PayloadHash::Unsigned);
        let presigned = self
            .signer
            .presign(request, &self.credentials, &params, EXPIRES_IN)
            .expect("signs");
        presigned.into_parts().1
    }
}

impl Default for S3Sigv4 {
    fn default() -> Self {
        Self::new()
    }
}

/// aws-sigv4 with the settings the AWS SDK uses for S3. Identity and
/// settings are prepared once; aws-sigv4 has no signing-key cache, so it
/// derives the key on every call (that is its per-request cost).
pub struct AwsSigv4 {
    pub identity: Identity,
    pub time: SystemTime,
}

impl AwsSigv4 {
    pub fn new() -> Self {
        let credentials =
            aws_credential_types::Credentials::new(ACCESS_KEY, SECRET_KEY, None, None, "bench");
        Self {
            identity: credentials.into(),
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(UNIX_TIME),
        }
    }

    fn settings(location: SignatureLocation) -> SigningSettings {
        let mut settings = SigningSettings::default();
        settings.percent_encoding_mode = PercentEncodingMode::Single;
        settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
        settings.signature_location = location;
        match location {
            SignatureLocation::Headers => {
                settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
            }
            _ => settings.expires_in = Some(EXPIRES_IN),
        }
        settings
    }

    fn sign(
        &self,
        request: &http::Request<()>,
        location: SignatureLocation,
        body: SignableBody<'_>,
    ) -> aws_sigv4::http_request::SigningInstructions {
        let params = aws_sigv4::sign::v4::SigningParams::builder()
            .identity(&self.identity)
            .region(REGION)
            .name("s3")
            .time(self.time)
            .settings(Self::settings(location))
            .build()
            .expect("valid params")
            .into();
        let signable = SignableRequest::new(
            request.method().as_str(),
            request.uri().to_string(),
            request
                .headers()
                .iter()
                .map(|(name, value)| (name.as_str(), value.to_str().expect("ASCII header"))),
            body,
        )
        .expect("signable");
        let (instructions, _signature) = sign(signable, &params).expect("signs").into_parts();
        instructions
    }

    /// Header signing: builds the signing params, signs and applies the
    /// headers, as an SDK does per request.
    pub fn sign_headers(&self, request: &mut http::Request<()>) {
        let body = SignableBody::Precomputed(EMPTY_SHA256.to_owned());
        self.sign(request, SignatureLocation::Headers, body)
            .apply_to_request_http1x(request);
    }

    /// Presigned URL.
    pub fn presign(&self, request: &http::Request<()>) -> String {
        let mut presigned = request.clone();
        self.sign(
            request,
            SignatureLocation::QueryParams,
            SignableBody::UnsignedPayload,
        )
        .apply_to_request_http1x(&mut presigned);
        presigned.uri().to_string()
    }
}

impl Default for AwsSigv4 {
    fn default() -> Self {
        Self::new()
    }
}

/// rusty-s3 (presigning only).
pub struct RustyS3 {
    pub bucket: rusty_s3::Bucket,
    pub credentials: rusty_s3::Credentials,
    pub time: jiff::Timestamp,
}

impl RustyS3 {
    pub fn new() -> Self {
        let endpoint = ENDPOINT.parse().expect("valid endpoint");
        Self {
            bucket: rusty_s3::Bucket::new(endpoint, rusty_s3::UrlStyle::Path, BUCKET, REGION)
                .expect("valid bucket"),
            credentials: rusty_s3::Credentials::new(ACCESS_KEY, SECRET_KEY),
            time: jiff::Timestamp::from_second(UNIX_TIME as i64).expect("valid time"),
        }
    }

    /// Presigned URL.
    pub fn presign(&self) -> String {
        use rusty_s3::S3Action;
        self.bucket
            .get_object(Some(&self.credentials), KEY)
            .sign_with_time(EXPIRES_IN, &self.time)
            .to_string()
    }
}

impl Default for RustyS3 {
    fn default() -> Self {
        Self::new()
    }
}

/// The benchmark groups, generic over the measurement so `benches/signing.rs`
/// (wall-clock) and `benches/signing_cpu.rs` (thread CPU time) run the very
/// same code.
pub mod benches {
    use criterion::measurement::Measurement;
    use criterion::{BatchSize, Criterion};

    use super::{AwsSigv4, RustyS3, S3Sigv4, request};

    /// Header signing: s3-sigv4 vs aws-sigv4.
    pub fn header_signing<M: Measurement>(c: &mut Criterion<M>) {
        let mut group = c.benchmark_group("sign_headers");
        let ours = S3Sigv4::new();
        let aws = AwsSigv4::new();
        let template = request();
        group.bench_function("s3-sigv4", |b| {
            b.iter_batched_ref(
                || template.clone(),
                |r| ours.sign_headers(r),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("aws-sigv4", |b| {
            b.iter_batched_ref(
                || template.clone(),
                |r| aws.sign_headers(r),
                BatchSize::SmallInput,
            )
        });
        group.finish();
    }

    /// Presigning: s3-sigv4 vs aws-sigv4 vs rusty-s3.
    pub fn presigning<M: Measurement>(c: &mut Criterion<M>) {
        let mut group = c.benchmark_group("presign");
        let ours = S3Sigv4::new();
        let aws = AwsSigv4::new();
        let rusty = RustyS3::new();
        let template = request();
        group.bench_function("s3-sigv4", |b| b.iter(|| ours.presign(&template)));
        group.bench_function("aws-sigv4", |b| b.iter(|| aws.presign(&template)));
        group.bench_function("rusty-s3", |b| b.iter(|| rusty.presign()));
        group.finish();
    }
}

/// The `X-Amz-Signature` of a presigned URL.
pub fn url_signature(url: &str) -> &str {
    url.split("X-Amz-Signature=")
        .nth(1)
        .map(|rest| rest.split('&').next().unwrap_or(rest))
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The libraries agree, so the benchmark compares equal work.
    #[test]
    fn header_signatures_agree() {
        let mut ours = request();
        S3Sigv4::new().sign_headers(&mut ours);
        let mut theirs = request();
        AwsSigv4::new().sign_headers(&mut theirs);
        assert_eq!(
            ours.headers()["authorization"],
            theirs.headers()["authorization"]
        );
        assert_eq!(ours.headers()["x-amz-date"], theirs.headers()["x-amz-date"]);
    }

    #[test]
    fn presigned_signatures_agree() {
        let ours = S3Sigv4::new().presign(&request());
        let aws = AwsSigv4::new().presign(&request());
        let rusty = RustyS3::new().presign();
        assert_eq!(url_signature(&ours), url_signature(&aws), "{ours}\n{aws}");
        assert_eq!(
            url_signature(&ours),
            url_signature(&rusty),
            "{ours}\n{rusty}"
        );
        assert_eq!(url_signature(&ours).len(), 64);
    }
}
