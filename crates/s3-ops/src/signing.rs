//! How a request must be signed. Addressing decides it (a request to an access point ARN is
//! signed for the ARN's region, one to an Object Lambda access point for the
//! `s3-object-lambda` service, one to a directory bucket for `s3express` with the bucket's
//! session credentials, one to a Multi-Region Access Point with SigV4a for every region);
//! every signer of the project (the client, the presigner, a custom transport) reads it
//! from [`OperationRequest::signing`](crate::OperationRequest::signing).

use s3_sigv4::{PayloadHash, SigningParams, SigningTime};

use crate::endpoint::Endpoint;
use crate::error::Error;

/// The signature a request needs: algorithm, region (or region set), service, and whether
/// it is signed with S3 Express session credentials.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SigningScope {
    /// `None`: the endpoint's region.
    region: Option<String>,
    region_set: Option<&'static str>,
    /// `None`: `s3`.
    service: Option<&'static str>,
    /// The directory bucket whose session credentials sign the request.
    session_bucket: Option<String>,
    /// With a region set: SigV4 for the region is accepted too (S3 on Outposts), for a
    /// signer built without SigV4a.
    v4_fallback: bool,
}

/// The region set of requests to a Multi-Region Access Point: AWS may route each one to
/// any of the access point's regions, so the signature must hold in all of them.
const MULTI_REGION_ACCESS_POINT_REGION_SET: &str = "*";

impl SigningScope {
    pub(crate) fn in_region(mut self, region: &str, endpoint: &Endpoint) -> Self {
        self.region = (region != endpoint.region()).then(|| region.to_owned());
        self
    }

    pub(crate) fn for_every_region(mut self) -> Self {
        self.region_set = Some(MULTI_REGION_ACCESS_POINT_REGION_SET);
        self
    }

    /// SigV4a for every region where the signer has it, SigV4 for the scope's region
    /// otherwise: the two signatures S3 on Outposts accepts, in the SDKs' order.
    pub(crate) fn for_every_region_or_own(mut self) -> Self {
        self.region_set = Some(MULTI_REGION_ACCESS_POINT_REGION_SET);
        self.v4_fallback = true;
        self
    }

    pub(crate) fn for_service(mut self, service: &'static str) -> Self {
        self.service = Some(service);
        self
    }

    pub(crate) fn with_session_of(mut self, bucket: &str) -> Self {
        self.session_bucket = Some(bucket.to_owned());
        self
    }

    /// The service of the credential scope: `s3`, `s3-object-lambda` or `s3express`.
    pub fn service(&self) -> &'static str {
        self.service.unwrap_or("s3")
    }

    /// The region of a SigV4 signature: the endpoint's, or an access point ARN's.
    pub fn region<'a>(&'a self, endpoint: &'a Endpoint) -> &'a str {
        self.region.as_deref().unwrap_or(endpoint.region())
    }

    /// The SigV4a region set the request must be signed for, or `None` when it is signed
    /// with SigV4 for one region. `Some("*")` for a request to a Multi-Region Access Point
    /// or S3 on Outposts.
    pub fn region_set(&self) -> Option<&'static str> {
        self.region_set
    }

    /// Whether a request with a [`SigningScope::region_set`] may be signed with SigV4 for
    /// [`SigningScope::region`] instead, by a signer without SigV4a (S3 on Outposts takes
    /// both; a Multi-Region Access Point only SigV4a).
    pub fn accepts_sigv4(&self) -> bool {
        self.region_set.is_none() || self.v4_fallback
    }

    /// The S3 Express One Zone directory bucket whose session credentials (CreateSession)
    /// must sign the request, with the session token in `x-amz-s3session-token`; `None`
    /// for requests signed with the caller's own credentials.
    pub fn express_session(&self) -> Option<&str> {
        self.session_bucket.as_deref()
    }

    /// The signer's parameters for this scope.
    ///
    /// SigV4a needs this crate's `sigv4a` feature (which turns on s3-sigv4's); without it a
    /// request with a region set is signed with SigV4 where S3 accepts that too
    /// ([`SigningScope::accepts_sigv4`]), and otherwise fails with [`Error::SigV4aDisabled`]
    /// instead of being signed with a signature S3 would refuse.
    pub fn params<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        time: SigningTime,
        payload: PayloadHash,
    ) -> Result<SigningParams<'a>, Error> {
        match self.region_set {
            None => Ok(SigningParams::new(
                self.region(endpoint),
                self.service(),
                time,
                payload,
            )),
            #[cfg(feature = "sigv4a")]
            Some(region_set) => Ok(SigningParams::v4a(
                region_set,
                self.service(),
                time,
                payload,
            )),
            #[cfg(not(feature = "sigv4a"))]
            Some(_) if self.v4_fallback => Ok(SigningParams::new(
                self.region(endpoint),
                self.service(),
                time,
                payload,
            )),
            #[cfg(not(feature = "sigv4a"))]
            Some(_) => Err(Error::SigV4aDisabled),
        }
    }
}
