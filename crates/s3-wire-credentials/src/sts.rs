//! STS AssumeRole (signed with the source credentials) and AssumeRoleWithWebIdentity
//! (unsigned, the token is the proof), over the credential sources' HTTP clients. The
//! answers are decoded by `s3-xml`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, header};
use s3_sigv4::{PayloadHash, Signer, SigningParams, SigningSettings, SigningTime};
use sha2::{Digest as _, Sha256};

use super::http::{Exchange, Http, Reach, checked_endpoint, configured_endpoint, status_error};
use super::{Credentials, Env, Error, ExpiringCredentials, Origin, SourceErrorKind};

/// How long one STS call may take, and how often a transient failure is retried.
const TIMEOUT: Duration = Duration::from_secs(10);
const ATTEMPTS: u32 = 3;
/// The first pause between attempts; doubled after each.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

static GENERIC: SigningSettings = SigningSettings::generic();

/// Where STS is reached and which region its requests are signed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StsEndpoint {
    pub(crate) url: String,
    pub(crate) signing_region: String,
}

impl StsEndpoint {
    /// `AWS_ENDPOINT_URL_STS` (or `AWS_ENDPOINT_URL`), else the regional endpoint of
    /// `region` (`https://sts.{region}.amazonaws.com`, `.com.cn` in China), else the global
    /// `https://sts.amazonaws.com` signed for `us-east-1`.
    pub(crate) fn resolve(
        env: &dyn Env,
        region: Option<&str>,
        origin: &Origin,
    ) -> Result<Self, Error> {
        let signing_region = region.unwrap_or("us-east-1").to_owned();
        let url = match (configured_endpoint(env, "STS"), region) {
            (Some(url), _) => url,
            (None, Some(region)) if region.starts_with("cn-") => {
                format!("https://sts.{region}.amazonaws.com.cn")
            }
            (None, Some(region)) => format!("https://sts.{region}.amazonaws.com"),
            (None, None) => "https://sts.amazonaws.com".to_owned(),
        };
        let url = checked_endpoint(&url, |_| false)
            .map_err(|kind| Error::from_source(origin.clone(), kind))?;
        Ok(Self {
            url: format!("{url}/"),
            signing_region,
        })
    }
}

/// The parameters of one role assumption.
#[derive(Debug, Clone)]
pub(crate) struct AssumeRole {
    pub(crate) role_arn: String,
    pub(crate) session_name: String,
    pub(crate) external_id: Option<String>,
    pub(crate) duration_seconds: Option<u32>,
}

/// `s3-wire-<unix millis>`: the session name when none is configured, as aws-config names
/// its sessions after itself.
pub(crate) fn default_session_name(now: SystemTime) -> String {
    let millis = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    format!("s3-wire-{millis}")
}

/// AssumeRole, signed with `source`.
pub(crate) async fn assume_role(
    http: &Http,
    endpoint: &StsEndpoint,
    source: &Credentials,
    params: &AssumeRole,
    now: SystemTime,
) -> Result<ExpiringCredentials, Error> {
    let origin = Origin::AssumeRole {
        role_arn: params.role_arn.clone(),
    };
    let mut form = Form::new("AssumeRole");
    form.add("RoleArn", &params.role_arn);
    form.add("RoleSessionName", &params.session_name);
    if let Some(external_id) = &params.external_id {
        form.add("ExternalId", external_id);
    }
    if let Some(duration) = params.duration_seconds {
        form.add("DurationSeconds", &duration.to_string());
    }
    let body = Bytes::from(form.0);
    call(http, endpoint, body, &origin, |headers, body| {
        sign(headers, body, endpoint, source, now, &origin)
    })
    .await
}

/// AssumeRoleWithWebIdentity with `token` (unsigned: the token authenticates).
pub(crate) async fn assume_role_with_web_identity(
    http: &Http,
    endpoint: &StsEndpoint,
    params: &AssumeRole,
    token: &str,
) -> Result<ExpiringCredentials, Error> {
    let origin = Origin::WebIdentity {
        role_arn: params.role_arn.clone(),
    };
    let mut form = Form::new("AssumeRoleWithWebIdentity");
    form.add("RoleArn", &params.role_arn);
    form.add("RoleSessionName", &params.session_name);
    form.add("WebIdentityToken", token);
    if let Some(duration) = params.duration_seconds {
        form.add("DurationSeconds", &duration.to_string());
    }
    let body = Bytes::from(form.0);
    call(http, endpoint, body, &origin, |_, _| Ok(())).await
}

/// Sends the form (signed by `authorize` at each attempt), retrying transient failures,
/// and decodes the credentials.
async fn call(
    http: &Http,
    endpoint: &StsEndpoint,
    body: Bytes,
    origin: &Origin,
    authorize: impl Fn(&mut HeaderMap, &[u8]) -> Result<(), Error>,
) -> Result<ExpiringCredentials, Error> {
    let mut base = HeaderMap::new();
    base.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-www-form-urlencoded; charset=utf-8"),
    );
    // Signed once: the signature stays valid for the few seconds the retries take.
    authorize(&mut base, &body)?;
    let answer = http
        .send_retrying(Reach::Service, origin, ATTEMPTS, RETRY_PAUSE, || Exchange {
            method: Method::POST,
            url: &endpoint.url,
            headers: base.clone(),
            body: body.clone(),
            timeout: TIMEOUT,
        })
        .await?;
    if !answer.is_success() {
        return Err(Error::from_source(origin.clone(), status_error(&answer)));
    }
    decode(&answer.body, origin)
}

fn decode(body: &[u8], origin: &Origin) -> Result<ExpiringCredentials, Error> {
    let result = s3_xml::decode_assume_role(body, &s3_xml::Limits::default())
        .map_err(|error| Error::from_source(origin.clone(), SourceErrorKind::Xml(error)))?;
    let sts = result.credentials;
    let expiration = sts.expiration.to_system_time();
    Ok(ExpiringCredentials::new(
        Credentials::new(
            sts.access_key_id,
            sts.secret_access_key,
            Some(sts.session_token),
        ),
        expiration,
    ))
}

fn sign(
    headers: &mut HeaderMap,
    body: &[u8],
    endpoint: &StsEndpoint,
    source: &Credentials,
    now: SystemTime,
    origin: &Origin,
) -> Result<(), Error> {
    let invalid = |error: s3_sigv4::Error| {
        Error::from_source(
            origin.clone(),
            SourceErrorKind::Misconfigured {
                setting: "source credentials".to_owned(),
                reason: error.to_string(),
            },
        )
    };
    let mut request = http::Request::builder()
        .method(Method::POST)
        .uri(&endpoint.url)
        .body(())
        .map_err(|error| {
            Error::from_source(
                origin.clone(),
                SourceErrorKind::Misconfigured {
                    setting: "STS endpoint".to_owned(),
                    reason: error.to_string(),
                },
            )
        })?;
    *request.headers_mut() = std::mem::take(headers);
    let time = SigningTime::from_system_time(now).map_err(invalid)?;
    let payload = PayloadHash::Sha256(Sha256::digest(body).into());
    let params =
        SigningParams::new(&endpoint.signing_region, "sts", time, payload).with_settings(&GENERIC);
    Signer::new()
        .sign_headers(&mut request, source, &params)
        .map_err(invalid)?;
    *headers = std::mem::take(request.headers_mut());
    Ok(())
}

/// An `application/x-www-form-urlencoded` body of the STS Query API.
struct Form(String);

impl Form {
    fn new(action: &str) -> Self {
        let mut form = Self(String::new());
        form.add("Action", action);
        form.add("Version", "2011-06-15");
        form
    }

    fn add(&mut self, name: &str, value: &str) {
        if !self.0.is_empty() {
            self.0.push('&');
        }
        self.0.push_str(name);
        self.0.push('=');
        self.0.push_str(&s3_sigv4::uri_encode(value, true));
    }
}

#[cfg(test)]
mod tests {
    use super::super::MapEnv;
    use super::*;

    #[test]
    fn endpoints_regional_global_and_configured() {
        let origin = Origin::AssumeRole {
            role_arn: "arn".into(),
        };
        let env = MapEnv::new();
        let regional = StsEndpoint::resolve(&env, Some("eu-west-1"), &origin).unwrap();
        assert_eq!(regional.url, "https://sts.eu-west-1.amazonaws.com/");
        assert_eq!(regional.signing_region, "eu-west-1");
        let china = StsEndpoint::resolve(&env, Some("cn-north-1"), &origin).unwrap();
        assert_eq!(china.url, "https://sts.cn-north-1.amazonaws.com.cn/");
        let global = StsEndpoint::resolve(&env, None, &origin).unwrap();
        assert_eq!(
            (global.url.as_str(), global.signing_region.as_str()),
            ("https://sts.amazonaws.com/", "us-east-1")
        );
        let env = MapEnv::new().with_var("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9/");
        let configured = StsEndpoint::resolve(&env, Some("eu-west-1"), &origin).unwrap();
        assert_eq!(configured.url, "http://127.0.0.1:9/");
        let env = MapEnv::new().with_var("AWS_ENDPOINT_URL_STS", "http://sts.example.com");
        assert!(matches!(
            StsEndpoint::resolve(&env, None, &origin),
            Err(Error::Source {
                kind: SourceErrorKind::ForbiddenEndpoint { .. },
                ..
            })
        ));
    }

    #[test]
    fn form_values_are_percent_encoded() {
        let mut form = Form::new("AssumeRole");
        form.add("RoleSessionName", "a b+c/=");
        assert_eq!(
            form.0,
            "Action=AssumeRole&Version=2011-06-15&RoleSessionName=a%20b%2Bc%2F%3D"
        );
    }
}
