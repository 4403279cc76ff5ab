//! AWS's official S3 endpoint test cases (tools/endpoint-rules/testdata, from botocore),
//! every one through s3-ops' own [`Endpoint`] and the operation the case names: the URI's
//! scheme, host and path, the signature's scheme, service and region (or region set), or a
//! refusal before anything is built that names the cause.
//!
//! The rules' parameters map onto `Endpoint` as a user sets them. One difference is
//! deliberate and configuration, not a case: a custom endpoint is addressed path-style
//! unless virtual-hosted addressing is chosen ([`AddressingStyle::Auto`]), where the SDKs
//! default to virtual-hosted; the cases run with it chosen, as `ForcePathStyle: false`
//! says (`a_custom_endpoint_is_path_style_until_virtual_hosting_is_chosen` counts them).

use endpoint_rules::cases::{self, AuthScheme, Case, Expect};
use s3_ops::{
    AddressingStyle, BucketName, CreateBucket, Endpoint, Error, GetObject, HeadBucket, ListBuckets,
    ListDirectoryBuckets, ListObjects, ObjectKey, Operation, OperationRequest, SigningScope,
    WriteGetObjectResponse,
};

/// The endpoint a user configures for the case's parameters.
fn endpoint(case: &Case, style_for_custom: AddressingStyle) -> Result<Endpoint, Error> {
    let region = case.text("Region").unwrap_or("");
    let mut endpoint = match case.text("Endpoint") {
        Some(url) => Endpoint::custom(url, region)?.with_addressing_style(style_for_custom),
        None => Endpoint::aws(region)?,
    };
    endpoint = endpoint
        .with_fips(case.flag("UseFIPS"))
        .with_dual_stack(case.flag("UseDualStack"))
        .with_accelerate(case.flag("Accelerate"))
        .with_global_endpoint(case.flag("UseGlobalEndpoint"))
        .with_multi_region_access_points(!case.flag("DisableMultiRegionAccessPoints"))
        .with_s3_express_session_auth(!case.flag("DisableS3ExpressSessionAuth"));
    if let Some(on) = case.option("UseArnRegion") {
        endpoint = endpoint.with_use_arn_region(on);
    }
    if case.flag("ForcePathStyle") {
        endpoint = endpoint.with_addressing_style(AddressingStyle::Path);
    }
    Ok(endpoint)
}

fn request(
    case: &Case,
    style_for_custom: AddressingStyle,
) -> Result<(Endpoint, OperationRequest), Error> {
    let endpoint = endpoint(case, style_for_custom)?;
    let bucket = || BucketName::new_relaxed(case.text("Bucket").unwrap());
    let request = match case.operation_name() {
        "GetObject" => GetObject::new(bucket()?, ObjectKey::new(case.key())?).request(&endpoint)?,
        "ListObjects" => ListObjects::new(bucket()?).request(&endpoint)?,
        "CreateBucket" => CreateBucket::new(bucket()?).request(&endpoint)?,
        "HeadBucket" => HeadBucket::new(bucket()?).request(&endpoint)?,
        "ListBuckets" => ListBuckets::new().request(&endpoint)?,
        "ListDirectoryBuckets" => ListDirectoryBuckets::new().request(&endpoint)?,
        "WriteGetObjectResponse" => WriteGetObjectResponse::new(case.request_route(), "token")
            .body(&b"answer"[..])
            .request(&endpoint)?,
        other => panic!("{}: no operation {other}", case.name),
    };
    Ok((endpoint, request))
}

/// The request's URI: the rules' endpoint URL plus what the operation adds.
fn check_uri(case: &Case, request: &OperationRequest, url: &str) -> Result<(), String> {
    let uri = request.request.uri();
    let sent = format!(
        "{}://{}{}",
        uri.scheme_str().unwrap_or(""),
        uri.authority().map_or("", |a| a.as_str()),
        uri.path()
    );
    let expected = case.request_url(url);
    if sent.trim_end_matches('/').eq_ignore_ascii_case(&expected) {
        Ok(())
    } else {
        Err(format!("URI {sent}, rules {expected}"))
    }
}

/// The signature: the first scheme the SDKs would pick, and for a SigV4a scheme followed by
/// SigV4 (S3 on Outposts), SigV4 for its region where SigV4a is not compiled in.
fn check_signing(
    case: &Case,
    endpoint: &Endpoint,
    scope: &SigningScope,
    auth: &[AuthScheme],
) -> Result<(), String> {
    let first = &auth[0];
    let got = format!(
        "{} {} region {} set {:?} session {:?} v4 {}",
        first.name,
        scope.service(),
        scope.region(endpoint),
        scope.region_set(),
        scope.express_session(),
        scope.accepts_sigv4()
    );
    let service = scope.service() == first.signing_name;
    let ok = match first.name.as_str() {
        "sigv4" => {
            service
                && scope.region_set().is_none()
                && scope.express_session().is_none()
                && Some(scope.region(endpoint)) == first.signing_region.as_deref()
        }
        "sigv4-s3express" => {
            service
                && scope.region_set().is_none()
                && scope.express_session() == case.text("Bucket")
                && Some(scope.region(endpoint)) == first.signing_region.as_deref()
        }
        "sigv4a" => {
            let fallback = auth.get(1).filter(|scheme| scheme.name == "sigv4");
            service
                && scope.region_set() == first.signing_region_set.as_deref()
                && scope.accepts_sigv4() == fallback.is_some()
                && fallback.is_none_or(|v4| {
                    v4.signing_name == first.signing_name
                        && Some(scope.region(endpoint)) == v4.signing_region.as_deref()
                })
        }
        other => panic!("{}: auth scheme {other}", case.name),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("signed {got}, rules {auth:?}"))
    }
}

fn check(case: &Case, style_for_custom: AddressingStyle) -> Result<(), String> {
    match (&case.expect, request(case, style_for_custom)) {
        (Expect::Error(aws), Err(refusal)) => {
            let refusal = refusal.to_string();
            if cases::names_the_cause(aws, &refusal) {
                Ok(())
            } else {
                Err(format!(
                    "refused with {refusal:?}, which does not name {aws:?}"
                ))
            }
        }
        (Expect::Error(aws), Ok((_, request))) => Err(format!(
            "built {} where the rules refuse: {aws}",
            request.request.uri()
        )),
        (Expect::Endpoint { url, .. }, Err(refusal)) => {
            Err(format!("refused ({refusal}) where the rules send to {url}"))
        }
        (Expect::Endpoint { url, auth }, Ok((endpoint, request))) => {
            check_uri(case, &request, url)?;
            check_signing(case, &endpoint, request.signing(), auth)
        }
    }
}

#[test]
fn every_official_case_is_addressed_and_signed_as_the_rules_say() {
    let cases = cases::official();
    assert_eq!(cases.len(), 393);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            check(case, AddressingStyle::VirtualHosted)
                .err()
                .map(|why| format!("{}: {why}", case.name))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of 393 official cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The one deliberate difference, counted: with the custom endpoint's default style
/// (path-style), the cases that put the bucket in the host of a custom endpoint differ, and
/// only those.
#[test]
fn a_custom_endpoint_is_path_style_until_virtual_hosting_is_chosen() {
    let differing: Vec<String> = cases::official()
        .iter()
        .filter(|case| check(case, AddressingStyle::Auto).is_err())
        .map(|case| {
            assert!(case.text("Endpoint").is_some(), "{} differs", case.name);
            case.name.clone()
        })
        .collect();
    assert!(!differing.is_empty());
    println!(
        "{} cases address a custom endpoint virtual-hosted",
        differing.len()
    );
}

/// The rules' auth schemes as docs/compatibility.md writes them.
fn describe(auth: &[AuthScheme]) -> String {
    let first = &auth[0];
    let region = first.signing_region.as_deref().unwrap_or("");
    let mut text = match first.name.as_str() {
        "sigv4" => format!("SigV4 `{}` {region}", first.signing_name),
        "sigv4-s3express" => format!("session `{}` {region}", first.signing_name),
        _ => format!(
            "SigV4a `{}` `{}`",
            first.signing_name,
            first.signing_region_set.as_deref().unwrap_or("")
        ),
    };
    if let Some(v4) = auth.get(1) {
        text.push_str(&format!(
            " or SigV4 {}",
            v4.signing_region.as_deref().unwrap_or("")
        ));
    }
    text
}

/// docs/compatibility.md's table of addressing forms says what the official cases say.
#[test]
fn the_documented_forms_are_the_official_cases() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/compatibility.md"
    ))
    .unwrap();
    let table = docs
        .split("<!-- endpoint-cases -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- /endpoint-cases -->").next())
        .expect("the table of forms in docs/compatibility.md");
    let cases = cases::official();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| form"))
        .map(|line| {
            line.split(" | ")
                .map(|c| c.trim_matches(['|', ' ']))
                .collect()
        })
        .collect();
    assert!(rows.len() >= 15, "{rows:?}");
    for row in rows {
        let [_, name, url, signed] = row[..] else {
            panic!("{row:?}");
        };
        let name = name.trim_matches('`');
        let case = cases
            .iter()
            .find(|case| case.name == name)
            .unwrap_or_else(|| panic!("no official case {name:?}"));
        let Expect::Endpoint {
            url: expected,
            auth,
        } = &case.expect
        else {
            panic!("{name}: an error case");
        };
        assert_eq!(url.trim_matches('`'), expected, "{name}");
        assert_eq!(signed, describe(auth), "{name}");
    }
}
