//! s3-ops' addressing against AWS's rule set itself, evaluated by the interpreter in
//! tools/endpoint-rules, over many generated configurations: regions of every partition
//! and malformed ones, bucket names of every kind and near misses of each, ARNs with a
//! part changed, custom endpoints, and every flag. Wherever the rules give an endpoint,
//! s3-ops must build the same URL signed the same way; wherever they refuse, s3-ops must
//! refuse too. The few places where s3-ops decides otherwise on purpose are listed in
//! [`deliberate`], each with its reason (docs/compatibility.md).

use endpoint_rules::{ParamValue, Params, RuleSet, cases};
use s3_ops::{
    AddressingStyle, BucketName, Endpoint, GetObject, ObjectKey, Operation, OperationRequest,
};

/// xorshift64*: reproducible, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

const REGIONS: &[&str] = &[
    "us-east-1",
    "us-west-2",
    "eu-central-1",
    "aws-global",
    "cn-north-1",
    "us-gov-west-1",
    "us-iso-east-1",
    "eu-isoe-west-1",
    "s3-external-1",
    "snow",
    "us-east.special",
    "US-EAST-1",
    "us_east_1",
    "a b",
    "",
];

const BUCKETS: &[&str] = &[
    "bucket",
    "my-bucket",
    "my.bucket",
    "ab",
    "a.b.c",
    "Bucket",
    "99_ab",
    "bucket!",
    "192.168.0.1",
    "-bucket",
    "bucket-",
    "my-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias",
    "mybucket--usw2-az1--x-s3",
    "my--s3--bucket--usw2-az12--x-s3",
    "b--test1-long1-zone-ab1--x-s3",
    "mybucket--usaz1--x-s3",
    "my.bucket--usw2-az1--x-s3",
    "myaccesspoint--usw2-az1--xa-s3",
    "ap--test-zone-ab1--xa-s3",
    "ap--usaz1--xa-s3",
    "test-accessp-o0b1d075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3",
    "test-accessp-e0000075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3",
    "test-accessp-o0b1d075431d83bebde8xz5w8ijx1qzlbp3i3kbeta0--op-s3",
    "test-accessp-h0000075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3",
    "short--op-s3",
    "arn:aws:s3:us-west-2:123456789012:accesspoint:myendpoint",
    "arn:aws:s3:us-east-1:123456789012:accesspoint/myendpoint",
    "arn:aws-cn:s3:cn-north-1:123456789012:accesspoint/ap",
    "arn:aws:s3:us-west-2:123456789012:accesspoint:my.ap",
    "arn:aws:s3:us-west-2:123456789012:accesspoint:myendpoint:extra",
    "arn:aws:s3:us-west-2::accesspoint:myendpoint",
    "arn:aws:s3:us-west-2:12345_789012:accesspoint:myendpoint",
    "arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/mybanner",
    "arn:aws:s3-object-lambda:us-east-1:123456789012:accesspoint/mybanner",
    "arn:aws:s3-object-lambda::123456789012:accesspoint/mybanner",
    "arn:aws:s3-object-lambda:us-west-2:123456789012:bucket/b",
    "arn:aws:s3::123456789012:accesspoint:mfzwi23gnjvgw.mrap",
    "arn:aws-cn:s3::123456789012:accesspoint:mfzwi23gnjvgw.mrap",
    "arn:aws:s3::123456789012:accesspoint:my_endpoint",
    "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/accesspoint/reports",
    "arn:aws:s3-outposts:us-east-1:123456789012:outpost:op-01234567890123456:accesspoint:ap",
    "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456",
    "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/bucket/b",
    "arn:aws:sqs:us-west-2:123456789012:queue",
    "arn:aws:s3:us-west-2:123456789012:",
    "arn:aws:s3:::bucket",
];

const ENDPOINTS: &[&str] = &[
    "https://s3.example.com",
    "http://s3.example.com:9000/base",
    "http://10.0.0.1",
    "https://[::1]:9000",
    "https://vpce-1a2b.s3.us-west-2.vpce.amazonaws.com",
];

const FLAGS: &[&str] = &[
    "UseFIPS",
    "UseDualStack",
    "Accelerate",
    "ForcePathStyle",
    "UseGlobalEndpoint",
    "DisableMultiRegionAccessPoints",
    "DisableS3ExpressSessionAuth",
];

fn generate(rng: &mut Rng) -> Params {
    let mut params = Params::new();
    let region = rng.pick(REGIONS);
    if !region.is_empty() {
        params.set("Region", region);
    }
    params.set("Bucket", rng.pick(BUCKETS));
    if rng.chance(3) {
        params.set("Endpoint", rng.pick(ENDPOINTS));
    }
    for flag in FLAGS {
        if rng.chance(5) {
            params.set(*flag, true);
        }
    }
    if rng.chance(4) {
        params.set("UseArnRegion", rng.chance(2));
    }
    params
}

fn text<'a>(params: &'a Params, name: &str) -> Option<&'a str> {
    match params.get(name) {
        Some(ParamValue::String(s)) => Some(s),
        _ => None,
    }
}

fn flag(params: &Params, name: &str) -> bool {
    matches!(params.get(name), Some(ParamValue::Bool(true)))
}

fn ours(params: &Params) -> Result<(Endpoint, OperationRequest), s3_ops::Error> {
    let region = text(params, "Region").unwrap_or("");
    let mut endpoint = match text(params, "Endpoint") {
        Some(url) => {
            Endpoint::custom(url, region)?.with_addressing_style(AddressingStyle::VirtualHosted)
        }
        None => Endpoint::aws(region)?,
    };
    endpoint = endpoint
        .with_fips(flag(params, "UseFIPS"))
        .with_dual_stack(flag(params, "UseDualStack"))
        .with_accelerate(flag(params, "Accelerate"))
        .with_global_endpoint(flag(params, "UseGlobalEndpoint"))
        .with_multi_region_access_points(!flag(params, "DisableMultiRegionAccessPoints"))
        .with_s3_express_session_auth(!flag(params, "DisableS3ExpressSessionAuth"));
    if let Some(ParamValue::Bool(on)) = params.get("UseArnRegion") {
        endpoint = endpoint.with_use_arn_region(*on);
    }
    if flag(params, "ForcePathStyle") {
        endpoint = endpoint.with_addressing_style(AddressingStyle::Path);
    }
    let bucket = BucketName::new_relaxed(text(params, "Bucket").unwrap())?;
    let request = GetObject::new(bucket, ObjectKey::new("key")?).request(&endpoint)?;
    Ok((endpoint, request))
}

/// Where s3-ops refuses what the rules would send, on purpose; `None` where it agrees.
fn deliberate(params: &Params) -> Option<&'static str> {
    let region = text(params, "Region").unwrap_or("");
    let bucket = text(params, "Bucket").unwrap_or("");
    let custom = text(params, "Endpoint").is_some();
    if region.bytes().any(|b| b.is_ascii_uppercase()) {
        return Some("an upper-case region signs a scope AWS refuses: refused before sending");
    }
    let label = |l: &str| {
        !l.is_empty()
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if !region.split('.').all(label) {
        return Some("a region that is no DNS name makes no host: refused before sending");
    }
    if custom && bucket.contains(".mrap") {
        return Some("a Multi-Region Access Point is not sent around a custom endpoint");
    }
    if custom && bucket.ends_with("--op-s3") && bucket.len() >= 50 && !bucket.contains("beta") {
        return Some("an Outposts alias is not sent around a custom endpoint");
    }
    if text(params, "Endpoint").is_some_and(|url| url.starts_with("http://10."))
        && bucket.contains('.')
    {
        return Some("a dotted name in front of an IP address makes no host: kept in the path");
    }
    if bucket.contains(".bucket--") {
        return Some("an S3 Express name that is no host label is refused whatever the endpoint");
    }
    if region == "aws-global" && custom {
        return Some("aws-global signs for us-east-1 on every route, a custom endpoint's too");
    }
    None
}

#[test]
fn generated_configurations_are_addressed_as_the_rule_set_says() {
    let rules: RuleSet = cases::s3_rule_set();
    let mut rng = Rng(0x005e_ed0f_5303);
    let (mut agreed, mut refused_both) = (0, 0);
    let mut deliberate_counts = std::collections::BTreeMap::new();
    let mut differences = Vec::new();
    for _ in 0..20_000 {
        let params = generate(&mut rng);
        let theirs = rules.resolve(&params);
        let mine = ours(&params);
        let verdict = match (&theirs, &mine) {
            (Err(_), Err(_)) => {
                refused_both += 1;
                continue;
            }
            (Ok(endpoint), Ok((ep, request))) => {
                let uri = request.request.uri().to_string();
                let url = endpoint.url.trim_end_matches('/');
                let auth = &endpoint.properties["authSchemes"][0];
                let scope = request.signing();
                let same_uri = uri == format!("{url}/key");
                let same_auth = auth["signingName"] == scope.service()
                    && match auth["name"].as_str() {
                        Some("sigv4a") => scope.region_set() == Some("*"),
                        Some("sigv4-s3express") => {
                            scope.express_session().is_some()
                                && auth["signingRegion"] == scope.region(ep)
                        }
                        _ => {
                            scope.region_set().is_none()
                                && scope.express_session().is_none()
                                && auth["signingRegion"] == scope.region(ep)
                        }
                    };
                if same_uri && same_auth {
                    agreed += 1;
                    continue;
                }
                format!("rules {} {auth}, s3-ops {uri} {scope:?}", endpoint.url)
            }
            (Ok(endpoint), Err(refusal)) => {
                format!("rules {}, s3-ops refuses: {refusal}", endpoint.url)
            }
            (Err(message), Ok((_, request))) => {
                format!(
                    "rules refuse ({message}), s3-ops builds {}",
                    request.request.uri()
                )
            }
        };
        if let Some(reason) = deliberate(&params) {
            *deliberate_counts.entry(reason).or_insert(0) += 1;
            continue;
        }
        let described: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        differences.push(format!("{}: {verdict}", described.join(" ")));
    }
    println!("agreed on {agreed} endpoints and {refused_both} refusals; deliberately not:");
    for (reason, count) in &deliberate_counts {
        println!("  {count:5}  {reason}");
    }
    differences.sort();
    differences.dedup();
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences[..differences.len().min(40)].join("\n")
    );
    assert!(
        agreed > 5_000 && refused_both > 2_000,
        "{agreed} / {refused_both}"
    );
}
