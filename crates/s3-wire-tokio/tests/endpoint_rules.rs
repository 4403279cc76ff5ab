//! AWS's official S3 endpoint cases (tools/endpoint-rules/testdata, from botocore), every
//! one through the client as a user configures it, three ways: `ClientBuilder`'s methods,
//! the standard environment variables, and the shared config file's profile keys (where
//! the AWS SDKs read the case's built-ins from). Each request really goes out, to the
//! loopback [`EndpointRecorder`] the client reaches as its proxy, whatever host it names:
//! what arrives is compared with the rules' URL, and its signature, checked by the test
//! support's independent verifiers, with the rules' auth scheme, service and region (or
//! region set); S3 Express requests come with the session CreateSession gave. A case the
//! rules refuse must be refused before anything is sent, by a message that names the cause.
//!
//! Deliberate differences, by case name: [`DELIBERATE`]. A custom endpoint is addressed
//! path-style unless virtual-hosted addressing is chosen, which the cases run with where
//! `ForcePathStyle` is off (counted in s3-ops' own test of the cases).
#![cfg(feature = "sigv4a")]

mod support;

use std::sync::Arc;

use endpoint_rules::cases::{self, AuthScheme, Case, Expect};
use s3_wire_tokio::credentials::MapEnv;
use s3_wire_tokio::s3_ops::{
    AddressingStyle, BucketName, CreateBucket, GetObject, HeadBucket, ListBuckets,
    ListDirectoryBuckets, ListObjects, ObjectKey, WriteGetObjectResponse,
};
use s3_wire_tokio::{Client, ClientBuilder};
use support::endpoint_recorder::{ACCESS_KEY, EndpointRecorder, SECRET_KEY, Sighting, Signature};

/// Cases whose outcome the client decides otherwise, on purpose, with the reason.
const DELIBERATE: &[(&str, &str)] = &[(
    "no region set",
    "a client configured with no region signs for us-east-1 (as the AWS CLI does for S3): \
     requests to a bucket elsewhere follow S3's region redirect",
)];

#[derive(Debug, Clone, Copy)]
enum Way {
    Builder,
    Environment,
    Profile,
}

struct Setup {
    recorder: EndpointRecorder,
    home: tempfile::TempDir,
}

/// A loopback endpoint is reached directly, not through the proxy: `http://127.0.0.1` is
/// the recorder's own address (and its port written into the rules' URL too).
const LOOPBACK: &str = "http://127.0.0.1";

impl Setup {
    fn endpoint(&self, url: &str) -> String {
        match url.strip_prefix(LOOPBACK) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                format!("http://{}{rest}", self.recorder.addr())
            }
            _ => url.to_owned(),
        }
    }

    /// The client a user configures for the case's parameters, the given way.
    fn client(&self, case: &Case, way: Way) -> Result<Client, s3_wire_tokio::Error> {
        let custom = case.text("Endpoint");
        let builder = match way {
            Way::Builder => {
                let mut builder = Client::builder()
                    .fips(case.flag("UseFIPS"))
                    .dual_stack(case.flag("UseDualStack"))
                    .accelerate(case.flag("Accelerate"))
                    .legacy_global_endpoint(case.flag("UseGlobalEndpoint"))
                    .multi_region_access_points(!case.flag("DisableMultiRegionAccessPoints"))
                    .s3_express_session_auth(!case.flag("DisableS3ExpressSessionAuth"));
                if let Some(region) = case.text("Region") {
                    builder = builder.region(region);
                }
                if let Some(url) = custom {
                    builder = builder.endpoint(self.endpoint(url));
                }
                if let Some(on) = case.option("UseArnRegion") {
                    builder = builder.use_arn_region(on);
                }
                builder = if case.flag("ForcePathStyle") {
                    builder.addressing_style(AddressingStyle::Path)
                } else if custom.is_some() {
                    builder.addressing_style(AddressingStyle::VirtualHosted)
                } else {
                    builder
                };
                builder.static_credentials(ACCESS_KEY, SECRET_KEY, None)
            }
            Way::Environment | Way::Profile => self.builder_from_files(case, way),
        };
        builder
            .proxy(&self.recorder.proxy_url())
            .add_root_certificate_der(self.recorder.ca_der())
            .allow_http(true)
            .retry(support::retry(1))
            .build()
    }

    /// `ClientBuilder::from_env_with` over variables and a config file that set the case's
    /// parameters: `AWS_*` variables (`Way::Environment`) or profile keys (`Way::Profile`);
    /// acceleration and the addressing style exist only in the profile's `s3` section.
    fn builder_from_files(&self, case: &Case, way: Way) -> ClientBuilder {
        let flags = [
            ("UseFIPS", "AWS_USE_FIPS_ENDPOINT", "use_fips_endpoint"),
            (
                "UseDualStack",
                "AWS_USE_DUALSTACK_ENDPOINT",
                "use_dualstack_endpoint",
            ),
            ("UseArnRegion", "AWS_S3_USE_ARN_REGION", "s3_use_arn_region"),
            (
                "DisableMultiRegionAccessPoints",
                "AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS",
                "s3_disable_multiregion_access_points",
            ),
            (
                "DisableS3ExpressSessionAuth",
                "AWS_S3_DISABLE_EXPRESS_SESSION_AUTH",
                "s3_disable_express_session_auth",
            ),
        ];
        let mut variables: Vec<(&str, String)> = Vec::new();
        let mut profile = String::from("[default]\n");
        let mut set = |variable: &'static str, key: &str, value: String| match way {
            Way::Environment => variables.push((variable, value)),
            _ => profile.push_str(&format!("{key} = {value}\n")),
        };
        if let Some(region) = case.text("Region") {
            set("AWS_REGION", "region", region.to_owned());
        }
        if let Some(url) = case.text("Endpoint") {
            set("AWS_ENDPOINT_URL_S3", "endpoint_url", self.endpoint(url));
        }
        for (parameter, variable, key) in flags {
            if let Some(on) = case.option(parameter) {
                set(variable, key, on.to_string());
            }
        }
        if case.flag("UseGlobalEndpoint") {
            set(
                "AWS_S3_US_EAST_1_REGIONAL_ENDPOINT",
                "s3_us_east_1_regional_endpoint",
                "legacy".to_owned(),
            );
        }
        let style = if case.flag("ForcePathStyle") {
            Some("path")
        } else if case.text("Endpoint").is_some() {
            Some("virtual")
        } else {
            None
        };
        let mut s3 = String::new();
        if let Some(style) = style {
            s3.push_str(&format!("  addressing_style = {style}\n"));
        }
        if case.flag("Accelerate") {
            s3.push_str("  use_accelerate_endpoint = true\n");
        }
        if !s3.is_empty() {
            profile.push_str(&format!("s3 =\n{s3}"));
        }
        let config = self.home.path().join("config");
        std::fs::write(&config, profile).unwrap();
        let mut env = MapEnv::new()
            .with_home(self.home.path())
            .with_var("AWS_CONFIG_FILE", config.to_str().unwrap())
            .with_var(
                "AWS_SHARED_CREDENTIALS_FILE",
                self.home.path().join("none").to_str().unwrap(),
            )
            .with_var("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .with_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            .with_var("AWS_EC2_METADATA_DISABLED", "true");
        for (name, value) in &variables {
            env = env.with_var(*name, value);
        }
        ClientBuilder::from_env_with(Arc::new(env))
    }
}

/// Runs the case's operation, answering listings with the document its decoder takes.
async fn run(case: &Case, client: &Client, recorder: &EndpointRecorder) -> Result<(), String> {
    let bucket =
        || BucketName::new_relaxed(case.text("Bucket").unwrap()).map_err(|e| e.to_string());
    let listing = match case.operation_name() {
        "ListBuckets" => "<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>",
        "ListDirectoryBuckets" => {
            "<ListAllMyDirectoryBucketsResult><Buckets/></ListAllMyDirectoryBucketsResult>"
        }
        "ListObjects" => {
            "<ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated></ListBucketResult>"
        }
        _ => "",
    };
    recorder.answer_listings_with(listing);
    let outcome = match case.operation_name() {
        "GetObject" => {
            let key = ObjectKey::new(case.key()).map_err(|e| e.to_string())?;
            client
                .get_object(GetObject::new(bucket()?, key))
                .await
                .map(drop)
        }
        "ListObjects" => client
            .list_objects(ListObjects::new(bucket()?))
            .await
            .map(drop),
        "CreateBucket" => client
            .create_bucket(CreateBucket::new(bucket()?))
            .await
            .map(drop),
        "HeadBucket" => client
            .head_bucket(HeadBucket::new(bucket()?))
            .await
            .map(drop),
        "ListBuckets" => client.list_buckets(ListBuckets::new()).await.map(drop),
        "ListDirectoryBuckets" => client.send(ListDirectoryBuckets::new()).await.map(drop),
        "WriteGetObjectResponse" => client
            .write_get_object_response(
                WriteGetObjectResponse::new(case.request_route(), "token").status_code(200),
                bytes::Bytes::from_static(b"transformed"),
            )
            .await
            .map(drop),
        other => panic!("{}: no operation {other}", case.name),
    };
    outcome.map_err(|e| e.to_string())
}

/// What arrived against the rules' endpoint: the operation's request at the rules' URL,
/// signed as their first auth scheme says (SigV4a where it comes first: this build has
/// it), and for a session scheme, CreateSession first at the same host.
fn check_sent(
    setup: &Setup,
    case: &Case,
    url: &str,
    auth: &[AuthScheme],
    sent: &[Sighting],
) -> Result<(), String> {
    let (request, before) = sent.split_last().ok_or("nothing was sent")?;
    let expected = case.request_url(&setup.endpoint(url));
    if !request
        .url()
        .trim_end_matches('/')
        .eq_ignore_ascii_case(&expected)
    {
        return Err(format!("sent to {}, rules {expected}", request.url()));
    }
    let first = &auth[0];
    let region = first.signing_region.clone().unwrap_or_default();
    let service = first.signing_name.clone();
    let expected_signature = match first.name.as_str() {
        "sigv4" => Signature::V4 { service, region },
        "sigv4-s3express" => Signature::Session { service, region },
        "sigv4a" => Signature::V4a {
            service,
            region_set: first.signing_region_set.clone().unwrap_or_default(),
        },
        other => panic!("{}: auth scheme {other}", case.name),
    };
    if request.signature != expected_signature {
        return Err(format!("signed {:?}, rules {auth:?}", request.signature));
    }
    let sessions: Vec<&Sighting> = before.iter().filter(|s| s.query == "session").collect();
    match (first.name.as_str(), &sessions[..], before.len()) {
        ("sigv4-s3express", [session], 1) => {
            if session.authority != request.authority
                || !matches!(session.signature, Signature::V4 { ref service, .. } if service == "s3express")
            {
                return Err(format!("CreateSession {session:?} for {request:?}"));
            }
        }
        (_, [], 0) => {}
        _ => return Err(format!("also sent {before:?}")),
    }
    Ok(())
}

async fn check(setup: &Setup, case: &Case, way: Way) -> Result<(), String> {
    setup.recorder.take();
    let outcome = match setup.client(case, way) {
        Ok(client) => run(case, &client, &setup.recorder).await,
        Err(refusal) => Err(refusal.to_string()),
    };
    let sent = setup.recorder.take();
    match (&case.expect, outcome) {
        (Expect::Error(aws), Err(refusal)) => {
            if !sent.is_empty() {
                Err(format!("refused only after sending {sent:?}"))
            } else if cases::names_the_cause(aws, &refusal) {
                Ok(())
            } else {
                Err(format!(
                    "refused with {refusal:?}, which does not name {aws:?}"
                ))
            }
        }
        (Expect::Error(aws), Ok(())) => Err(format!("sent {sent:?} where the rules refuse: {aws}")),
        (Expect::Endpoint { url, .. }, Err(refusal)) => Err(format!(
            "failed ({refusal}) where the rules send to {url}; sent {sent:?}"
        )),
        (Expect::Endpoint { url, auth }, Ok(())) => check_sent(setup, case, url, auth, &sent),
    }
}

#[tokio::test]
async fn every_official_case_through_the_builder_the_environment_and_the_profile() {
    let setup = Setup {
        recorder: EndpointRecorder::start(),
        home: tempfile::tempdir().unwrap(),
    };
    let cases = cases::official();
    assert_eq!(cases.len(), 393);
    let mut failures = Vec::new();
    let mut deliberate = 0;
    for case in &cases {
        for way in [Way::Builder, Way::Environment, Way::Profile] {
            if let Err(why) = check(&setup, case, way).await {
                if DELIBERATE
                    .iter()
                    .any(|(name, _)| case.name.starts_with(name))
                {
                    deliberate += 1;
                    continue;
                }
                failures.push(format!("{} ({way:?}): {why}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} case runs differ:\n{}",
        failures.len(),
        cases.len() * 3,
        failures.join("\n")
    );
    // Each deliberate difference is real: listed cases do differ, all three ways.
    assert_eq!(deliberate, DELIBERATE.len() * 3);
}
