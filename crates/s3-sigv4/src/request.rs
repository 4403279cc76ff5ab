//! The view of an HTTP request the signer needs, implemented for `http` types.

use http::HeaderMap;

/// A request that can be signed: method, target URI parts and mutable headers.
///
/// Implemented for [`http::Request<B>`] and [`http::request::Parts`]. Other
/// HTTP stacks implement it for their own request type; the path and query are
/// taken as they will be sent on the wire.
pub trait SignableRequest {
    /// The method, e.g. `GET`.
    fn method(&self) -> &str;
    /// The URI scheme (`https`), if the request target carries one.
    fn scheme(&self) -> Option<&str>;
    /// The URI authority (`host[:port]`), if the request target carries one.
    /// Used as the signed `host` when there is no `host` header.
    fn authority(&self) -> Option<&str>;
    /// The path as sent, starting with `/` (an empty path means `/`).
    fn path(&self) -> &str;
    /// The query as sent, without `?`.
    fn query(&self) -> Option<&str>;
    /// The headers.
    fn headers(&self) -> &HeaderMap;
    /// The headers, for adding the signature.
    fn headers_mut(&mut self) -> &mut HeaderMap;
}

impl<B> SignableRequest for http::Request<B> {
    fn method(&self) -> &str {
        self.method().as_str()
    }
    fn scheme(&self) -> Option<&str> {
        self.uri().scheme_str()
    }
    fn authority(&self) -> Option<&str> {
        self.uri().authority().map(http::uri::Authority::as_str)
    }
    fn path(&self) -> &str {
        self.uri().path()
    }
    fn query(&self) -> Option<&str> {
        self.uri().query()
    }
    fn headers(&self) -> &HeaderMap {
        self.headers()
    }
    fn headers_mut(&mut self) -> &mut HeaderMap {
        self.headers_mut()
    }
}

impl SignableRequest for http::request::Parts {
    fn method(&self) -> &str {
        self.method.as_str()
    }
    fn scheme(&self) -> Option<&str> {
        self.uri.scheme_str()
    }
    fn authority(&self) -> Option<&str> {
        self.uri.authority().map(http::uri::Authority::as_str)
    }
    fn path(&self) -> &str {
        self.uri.path()
    }
    fn query(&self) -> Option<&str> {
        self.uri.query()
    }
    fn headers(&self) -> &HeaderMap {
        &self.headers
    }
    fn headers_mut(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }
}

/// An owned request for HTTP stacks without `http::Request` (proxies, raw
/// HTTP/1 writers): the target is kept exactly as it will be sent, so it may
/// hold bytes `http::Uri` rejects.
///
/// ```
/// use s3_sigv4::{Credentials, PayloadHash, RawRequest, Signer, SigningParams, SigningTime};
/// let mut request = RawRequest::new("GET", "/bucket/key");
/// request.scheme = Some("https".into());
/// request.authority = Some("s3.amazonaws.com".into());
/// let time = SigningTime::from_unix(1_369_353_600)?;
/// let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty);
/// Signer::new().sign_headers(&mut request, &Credentials::new("AKID", "secret", None), &params)?;
/// assert!(request.headers.contains_key("authorization"));
/// # Ok::<(), s3_sigv4::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct RawRequest {
    /// The method, e.g. `PUT`.
    pub method: String,
    /// The scheme, when the target is absolute.
    pub scheme: Option<String>,
    /// `host[:port]`, used when `headers` has no `host`.
    pub authority: Option<String>,
    /// The path as sent.
    pub path: String,
    /// The query as sent, without `?`.
    pub query: Option<String>,
    /// The headers.
    pub headers: HeaderMap,
}

impl RawRequest {
    /// A request with no headers; `target` is `path[?query]`.
    pub fn new(method: impl Into<String>, target: &str) -> Self {
        let (path, query) = match target.split_once('?') {
            Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
            None => (target.to_owned(), None),
        };
        Self {
            method: method.into(),
            path,
            query,
            ..Self::default()
        }
    }
}

impl SignableRequest for RawRequest {
    fn method(&self) -> &str {
        &self.method
    }
    fn scheme(&self) -> Option<&str> {
        self.scheme.as_deref()
    }
    fn authority(&self) -> Option<&str> {
        self.authority.as_deref()
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }
    fn headers(&self) -> &HeaderMap {
        &self.headers
    }
    fn headers_mut(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }
}

/// The `host` value to sign when the request has no `host` header: the
/// authority without user info and without the scheme's default port (what
/// HTTP clients send).
pub(crate) fn host_from_authority<'a>(scheme: Option<&str>, authority: &'a str) -> &'a str {
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let default_port = match scheme {
        Some(s) if s.eq_ignore_ascii_case("https") => ":443",
        Some(s) if s.eq_ignore_ascii_case("http") => ":80",
        _ => return host,
    };
    host.strip_suffix(default_port).unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_drops_default_port_and_userinfo() {
        assert_eq!(
            host_from_authority(Some("https"), "a.example:443"),
            "a.example"
        );
        assert_eq!(
            host_from_authority(Some("http"), "u:p@a.example:80"),
            "a.example"
        );
        assert_eq!(
            host_from_authority(Some("http"), "a.example:9000"),
            "a.example:9000"
        );
        assert_eq!(host_from_authority(None, "a.example:443"), "a.example:443");
    }
}
