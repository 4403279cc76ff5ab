//! Presigned URLs (SigV4 query signing) for the operations a browser or another client
//! can perform without credentials: GetObject, PutObject, HeadObject, DeleteObject and
//! UploadPart.

use std::time::Duration;

use http::header::CONTENT_LENGTH;
use s3_sigv4::{Credentials, PayloadHash, PresignedRequest, Signer, SigningTime};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::ops::delete_object::DeleteObject;
use crate::ops::get_object::GetObject;
use crate::ops::head_object::HeadObject;
use crate::ops::put_object::PutObject;
use crate::ops::upload_part::UploadPart;
use crate::request::Operation;

mod sealed {
    pub trait Sealed {}
}

/// Operations that can be presigned. Sealed: implemented for [`GetObject`], [`PutObject`],
/// [`HeadObject`], [`DeleteObject`] and [`UploadPart`].
pub trait Presignable: Operation + sealed::Sealed {}

macro_rules! presignable {
    ($($op:ty),*) => {$(
        impl sealed::Sealed for $op {}
        impl Presignable for $op {}
    )*};
}
presignable!(GetObject, PutObject, HeadObject, DeleteObject, UploadPart);

/// Presigns `operation` for `expires_in` (1 second to 7 days) from `time`.
///
/// The URL carries every query parameter of the operation; headers the operation sets
/// (`Content-Type`, `x-amz-checksum-*`, SSE-C keys, conditions, ...) are signed and
/// returned in [`PresignedRequest::headers`]: whoever uses the URL must send them
/// unchanged. The payload is `UNSIGNED-PAYLOAD`, and `Content-Length` is not signed, so
/// the uploader may send any body (pin it with a precomputed checksum via
/// `PutObject::checksum`).
///
/// A request to a Multi-Region Access Point is presigned with SigV4a for every region
/// (`X-Amz-Region-Set=*`), which needs this crate's `sigv4a` feature: without it this fails
/// with [`Error::SigV4aDisabled`].
///
/// ```
/// use std::time::Duration;
/// use s3_ops::{BucketName, Endpoint, ObjectKey, presign::presign};
/// use s3_ops::ops::get_object::GetObject;
/// use s3_sigv4::{Credentials, Signer, SigningTime};
///
/// let credentials = Credentials::new("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None);
/// let get = GetObject::new(BucketName::new("examplebucket")?, ObjectKey::new("test.txt")?);
/// let url = presign(
///     &get,
///     &Endpoint::aws("us-east-1")?,
///     &Signer::new(),
///     &credentials,
///     SigningTime::from_parts(2013, 5, 24, 0, 0, 0)?,
///     Duration::from_secs(86400),
/// )?;
/// assert!(url.url().starts_with("https://examplebucket.s3.us-east-1.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn presign<O: Presignable>(
    operation: &O,
    endpoint: &Endpoint,
    signer: &Signer,
    credentials: &Credentials,
    time: SigningTime,
    expires_in: Duration,
) -> Result<PresignedRequest, Error> {
    presign_request(
        operation.request(endpoint)?,
        endpoint,
        signer,
        credentials,
        time,
        expires_in,
    )
}

/// [`presign`] for a request already encoded from a [`Presignable`] operation, and
/// possibly changed since (with [`RequestExtras`](crate::RequestExtras): requester pays,
/// headers and parameters the URL's user must then send as they are).
///
/// A request to an S3 Express One Zone directory bucket is presigned with `credentials`
/// for the `s3express` service (the caller's own credentials, which S3 Express accepts on
/// its zonal endpoints), not with a five-minute session.
pub fn presign_request(
    mut encoded: crate::OperationRequest,
    endpoint: &Endpoint,
    signer: &Signer,
    credentials: &Credentials,
    time: SigningTime,
    expires_in: Duration,
) -> Result<PresignedRequest, Error> {
    // The uploader's body length is not known here; signing it would pin it to 0.
    encoded.request.headers_mut().remove(CONTENT_LENGTH);
    let params = encoded
        .signing()
        .params(endpoint, time, PayloadHash::Unsigned)?;
    signer
        .presign(&encoded.request, credentials, &params, expires_in)
        .map_err(Error::Presign)
}
