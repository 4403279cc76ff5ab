//! Access credentials. `Debug` never prints the secret or the session token.

use std::fmt;

use http::HeaderValue;

use crate::error::InvalidParameter;

/// An access key pair plus an optional session token (temporary credentials).
///
/// ```
/// use s3_sigv4::Credentials;
/// let creds = Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI", Some("FQoGZXIvYXdzE".into()));
/// let shown = format!("{creds:?}");
/// assert!(shown.contains("AKIDEXAMPLE"));
/// assert!(!shown.contains("wJalrXUtnFEMI") && !shown.contains("FQoGZXIvYXdzE"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
    /// Checked once here rather than on every signature.
    validity: Result<(), InvalidParameter>,
    /// The `x-amz-security-token` value, built once (STS tokens are ~1 KiB).
    token_header: Option<HeaderValue>,
}

impl Credentials {
    /// Credentials from their parts. This constructor cannot fail: invalid
    /// parts (an access key id with `/` or whitespace, an empty secret, a
    /// session token with control characters) are reported by every signing
    /// call that uses them.
    pub fn new(
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Self {
        let access_key_id = access_key_id.into();
        let secret_access_key = secret_access_key.into();
        let validity = check(&access_key_id, &secret_access_key, session_token.as_deref());
        let token_header = match (&validity, &session_token) {
            // Sensitive: `http`'s `Debug` hides it, HTTP/2 never indexes it (HPACK).
            (Ok(()), Some(token)) => HeaderValue::from_str(token).ok().map(|mut value| {
                value.set_sensitive(true);
                value
            }),
            _ => None,
        };
        Self {
            access_key_id,
            secret_access_key,
            session_token,
            validity,
            token_header,
        }
    }

    /// The access key id (public: it appears in every signed request).
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// The secret access key.
    pub fn secret_access_key(&self) -> &str {
        &self.secret_access_key
    }

    /// The session token of temporary credentials.
    pub fn session_token(&self) -> Option<&str> {
        self.session_token.as_deref()
    }

    /// The public key SigV4a derives from these credentials (feature
    /// `sigv4a`), as an uncompressed SEC1 point (`04 || X || Y`): what a
    /// verifier checks SigV4a signatures against.
    #[cfg(feature = "sigv4a")]
    pub fn sigv4a_public_key(&self) -> Result<[u8; 65], crate::Error> {
        self.validate()?;
        let key = crate::v4a::derive_key(&self.access_key_id, &self.secret_access_key)?;
        let point = key.verifying_key().to_sec1_point(false);
        let mut out = [0u8; 65];
        out.copy_from_slice(point.as_bytes());
        Ok(out)
    }

    /// Whether every part can be used in a header or URL.
    pub(crate) fn validate(&self) -> Result<(), InvalidParameter> {
        self.validity.clone()
    }

    /// The session token as a header value (valid credentials only).
    pub(crate) fn token_header(&self) -> Option<&HeaderValue> {
        self.token_header.as_ref()
    }
}

/// Checks everything that ends up in a header or URL.
fn check(access_key_id: &str, secret: &str, token: Option<&str>) -> Result<(), InvalidParameter> {
    let key_ok = !access_key_id.is_empty()
        && access_key_id
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'/');
    if !key_ok {
        return Err(InvalidParameter::AccessKeyId);
    }
    if secret.is_empty() {
        return Err(InvalidParameter::SecretAccessKey);
    }
    if token.is_some_and(|token| token.bytes().any(|b| b.is_ascii_control() || !b.is_ascii())) {
        return Err(InvalidParameter::SessionToken);
    }
    Ok(())
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_secret_and_token() {
        let creds = Credentials::new("AKID", "s3cr3t-value", Some("t0ken-value".into()));
        let shown = format!("{creds:?}");
        assert!(shown.contains("AKID"));
        assert!(!shown.contains("s3cr3t-value"));
        assert!(!shown.contains("t0ken-value"));
    }

    #[test]
    fn validation_rejects_bad_parts() {
        assert_eq!(
            Credentials::new("AK/ID", "s", None).validate(),
            Err(InvalidParameter::AccessKeyId)
        );
        assert_eq!(
            Credentials::new("AKID", "", None).validate(),
            Err(InvalidParameter::SecretAccessKey)
        );
        assert_eq!(
            Credentials::new("AKID", "s", Some("a\r\nb".into())).validate(),
            Err(InvalidParameter::SessionToken)
        );
        assert_eq!(
            Credentials::new("AKID", "s", Some("tok".into())).validate(),
            Ok(())
        );
    }
}
