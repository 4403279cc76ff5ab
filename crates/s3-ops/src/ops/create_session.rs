//! CreateSession: session credentials for an S3 Express One Zone directory bucket.

use std::fmt;

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::CreateSessionResult;

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::BucketName;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// What a session may do: `ReadWrite` (every zonal operation, the default) or `ReadOnly`
/// (GET, HEAD and listings), sent as `x-amz-create-session-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SessionMode {
    /// Reads and writes.
    #[default]
    ReadWrite,
    /// Reads only.
    ReadOnly,
}

impl fmt::Display for SessionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SessionMode::ReadWrite => "ReadWrite",
            SessionMode::ReadOnly => "ReadOnly",
        })
    }
}

/// `GET /?session` on a directory bucket's zonal endpoint, signed with the caller's own
/// credentials (service `s3express`). The answer holds credentials for five minutes, which
/// sign the bucket's zonal requests with the token in `x-amz-s3session-token`.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateSession.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateSession {
    bucket: BucketName,
    mode: SessionMode,
}

/// What CreateSession returns.
pub type CreateSessionOutput = DocumentOutput<CreateSessionResult>;

impl CreateSession {
    /// A `ReadWrite` session for `bucket`, which must be a directory bucket.
    pub fn new(bucket: BucketName) -> Self {
        CreateSession {
            bucket,
            mode: SessionMode::ReadWrite,
        }
    }

    /// The session's mode.
    pub fn mode(mut self, mode: SessionMode) -> Self {
        self.mode = mode;
        self
    }
}

impl Operation for CreateSession {
    type Output = CreateSessionOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let check = if self.bucket.is_s3_express() {
            Ok(())
        } else {
            Err(InvalidInput::Parameter {
                name: "Bucket",
                reason: format!(
                    "CreateSession is for S3 Express One Zone directory buckets and their access points \
                     (<name>--<zone-id>--x-s3), not {:?}",
                    self.bucket.as_str()
                ),
            }
            .into())
        };
        RequestBuilder::new(endpoint, Method::GET)
            .check(check)
            .iam_auth()
            .bucket(&self.bucket)
            .subresource("session")
            .header("x-amz-create-session-mode", self.mode)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<CreateSessionOutput, Error> {
        decode_document(
            response,
            s3_xml::decode_create_session,
            "CreateSessionResult",
        )
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "CreateSession"
    }
}
