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
