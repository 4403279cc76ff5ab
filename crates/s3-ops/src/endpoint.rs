//! Where requests go: AWS regional endpoints or custom S3-compatible URLs, and how a
//! bucket is addressed (path-style or virtual-hosted).
//!
//! [`Endpoint::address`] is the AWS SDKs' S3 endpoint rule set written out by hand, branch
//! for branch in the rule set's order (testdata/aws-endpoint-rules, with AWS's 393 official
//! cases run against it in tests/endpoint_rules.rs): the configuration's own errors first,
//! then S3 Express names, Outposts access point aliases, general-purpose buckets, ARNs,
//! Object Lambda's WriteGetObjectResponse and requests without a bucket.

use http::Uri;

use crate::error::{Error, InvalidInput};
use crate::names::{
    BucketKind, BucketName, ObjectKey, is_beta_outposts_alias, is_valid_host_label,
};
use crate::partition::{self, Partition};
use crate::signing::SigningScope;

/// How the bucket appears in a request URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AddressingStyle {
    /// Virtual-hosted for AWS when the bucket name can be a host label (and has no dots,
    /// which the wildcard certificate would not cover); path-style for custom endpoints,
    /// which often serve no per-bucket host names (MinIO, Ceph, local test servers).
    #[default]
    Auto,
    /// `https://host/bucket/key` (the SDKs' `force_path_style`).
    Path,
    /// `https://bucket.host/key` wherever the name allows it, path-style otherwise (a name
    /// that is no host label, an IP-address endpoint): what the AWS SDKs do without
    /// `force_path_style`, on AWS and on custom endpoints alike.
    VirtualHosted,
}

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain HTTP (local test servers).
    Http,
    /// HTTPS.
    Https,
}

impl Scheme {
    fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// Where an operation is served, when the bucket alone does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Object-level (data plane): the bucket's own host.
    Data,
    /// Bucket-level (control plane: CreateBucket, DeleteBucket, bucket configuration): a
    /// directory bucket's is its region's `s3express-control` endpoint, path-style, signed
    /// with the caller's credentials; Transfer Acceleration does not apply.
    BucketControl,
    /// The S3 Express control endpoint without a bucket (ListDirectoryBuckets).
    DirectoryControl,
    /// S3 Object Lambda's own endpoint without a bucket (WriteGetObjectResponse).
    ObjectLambda,
}

/// The URI of one request and how it must be signed.
pub(crate) struct Address {
    pub(crate) uri: Uri,
    pub(crate) signing: SigningScope,
}

/// The pseudo-region of the legacy global endpoint `s3.amazonaws.com`, signed for
/// `us-east-1` (as the AWS SDKs treat it).
const AWS_GLOBAL: &str = "aws-global";

/// A service endpoint: scheme, host, optional base path, signing region and addressing style.
///
/// ```
/// use s3_ops::{AddressingStyle, Endpoint};
///
/// let aws = Endpoint::aws("eu-west-1")?.with_dual_stack(true);
/// assert_eq!(aws.host(), "s3.dualstack.eu-west-1.amazonaws.com");
///
/// let minio = Endpoint::custom("http://127.0.0.1:9000/storage", "us-east-1")?;
/// assert_eq!(minio.addressing_style(), AddressingStyle::Auto); // path-style for custom
/// # Ok::<(), s3_ops::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    scheme: Scheme,
    /// Host with optional `:port`, lower-case: the custom endpoint's, or the AWS host of
    /// requests without a bucket.
    authority: String,
    /// Empty, or `/segment[/segment...]` without a trailing slash.
    base_path: String,
    /// As configured (`aws-global` included).
    region: String,
    style: AddressingStyle,
    custom: bool,
    fips: bool,
    dual_stack: bool,
    accelerate: bool,
    /// Whether a request to an access point ARN of another region than `region` goes to
    /// (and is signed for) the ARN's region, or fails.
    use_arn_region: bool,
    /// `us-east-1` on the legacy global host `s3.amazonaws.com`.
    global_endpoint: bool,
    multi_region_access_points: bool,
    express_session_auth: bool,
}

impl Endpoint {
    /// The AWS regional endpoint `https://s3.<region>.amazonaws.com` (the partition's DNS
    /// suffix, such as `.amazonaws.com.cn` for China regions). `aws-global` names the
    /// legacy global endpoint `https://s3.amazonaws.com`, signed for `us-east-1`.
    pub fn aws(region: &str) -> Result<Self, Error> {
        validate_region(region)?;
        let mut endpoint = Endpoint {
            scheme: Scheme::Https,
            authority: String::new(),
            base_path: String::new(),
            region: region.to_owned(),
            style: AddressingStyle::Auto,
            custom: false,
            fips: false,
            dual_stack: false,
            accelerate: false,
            use_arn_region: true,
            global_endpoint: false,
            multi_region_access_points: true,
            express_session_auth: true,
        };
        endpoint.refresh_aws_host();
        Ok(endpoint)
    }

    /// A custom endpoint such as `http://127.0.0.1:9000`, `https://<account>.r2.cloudflarestorage.com`
    /// or `https://gateway.example.com/s3` (a base path is kept in front of every request
    /// path). `region` is the signing region (`us-east-1` for most S3-compatible stores,
    /// `auto` for R2).
    pub fn custom(url: &str, region: &str) -> Result<Self, Error> {
        validate_region(region)?;
        let invalid = |reason: &str| {
            Error::from(InvalidInput::Endpoint {
                reason: format!("custom endpoint {url:?} is not a valid URL: {reason}"),
            })
        };
        let uri: Uri = url
            .parse()
            .map_err(|_| invalid("not a valid absolute URL"))?;
        let scheme = match uri.scheme_str() {
            Some("https") => Scheme::Https,
            Some("http") => Scheme::Http,
            _ => return Err(invalid("scheme must be http or https")),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| invalid("missing host"))?
            .as_str();
        if authority.contains('@') {
            return Err(invalid("credentials in the URL are not supported"));
        }
        if uri.query().is_some() || url.contains('#') {
            return Err(invalid("query strings and fragments are not allowed"));
        }
        let base_path = uri.path().trim_end_matches('/');
        if !base_path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/'))
        {
            return Err(invalid(
                "base path may contain only letters, digits, '-', '_', '.', '~' and '/'",
            ));
        }
        Ok(Endpoint {
            scheme,
            authority: authority.to_ascii_lowercase(),
            base_path: base_path.to_owned(),
            region: region.to_owned(),
            style: AddressingStyle::Auto,
            custom: true,
            fips: false,
            dual_stack: false,
            accelerate: false,
            use_arn_region: true,
            global_endpoint: false,
            multi_region_access_points: true,
            express_session_auth: true,
        })
    }

    /// Uses the dual-stack (IPv4 + IPv6) AWS hosts. A custom endpoint then refuses every
    /// request (it names its own host).
    pub fn with_dual_stack(mut self, enabled: bool) -> Self {
        self.dual_stack = enabled;
        self.refresh_aws_host();
        self
    }

    /// Uses the FIPS 140 AWS hosts (`s3-fips.<region>`, ...). The China partition has none,
    /// and a custom endpoint names its own host: requests through such an endpoint fail
    /// before sending anywhere else (see [`Endpoint::check`]).
    pub fn with_fips(mut self, enabled: bool) -> Self {
        self.fips = enabled;
        self.refresh_aws_host();
        self
    }

    /// Sends object requests to S3 Transfer Acceleration
    /// (`<bucket>.s3-accelerate[.dualstack].amazonaws.com`). Bucket-level operations and
    /// requests without a bucket keep the regional host. A custom endpoint then refuses
    /// every request.
    pub fn with_accelerate(mut self, enabled: bool) -> Self {
        self.accelerate = enabled;
        self
    }

    /// Whether a request to an access point ARN in another region than the endpoint's goes
    /// to the ARN's region (the default, as `use_arn_region` / `AWS_S3_USE_ARN_REGION`
    /// default to in the AWS SDKs), or fails before sending. An ARN of another partition
    /// always fails.
    pub fn with_use_arn_region(mut self, enabled: bool) -> Self {
        self.use_arn_region = enabled;
        self
    }

    /// Sends `us-east-1` requests to the legacy global endpoint `s3.amazonaws.com` instead
    /// of `s3.us-east-1.amazonaws.com` (the SDKs' `s3_us_east_1_regional_endpoint = legacy`,
    /// `AWS_S3_US_EAST_1_REGIONAL_ENDPOINT=legacy`). No effect in other regions, with FIPS
    /// or dual-stack, or on a custom endpoint.
    pub fn with_global_endpoint(mut self, enabled: bool) -> Self {
        self.global_endpoint = enabled;
        self.refresh_aws_host();
        self
    }

    /// Whether requests to Multi-Region Access Point ARNs are allowed (the default); off, as
    /// the SDKs' `s3_disable_multiregion_access_points`, they fail before sending.
    pub fn with_multi_region_access_points(mut self, enabled: bool) -> Self {
        self.multi_region_access_points = enabled;
        self
    }

    /// Whether requests to S3 Express One Zone directory buckets (and their access points)
    /// are signed with session credentials from CreateSession (the default), or with the
    /// caller's own credentials, as the SDKs' `s3_disable_express_session_auth` does.
    pub fn with_s3_express_session_auth(mut self, enabled: bool) -> Self {
        self.express_session_auth = enabled;
        self
    }

    /// Overrides the addressing style.
    pub fn with_addressing_style(mut self, style: AddressingStyle) -> Self {
        self.style = style;
        self
    }

    /// The same endpoint for another region (after a region redirect). Custom endpoints
    /// keep their URL and only change the signing region.
    pub fn with_region(mut self, region: &str) -> Result<Self, Error> {
        validate_region(region)?;
        region.clone_into(&mut self.region);
        self.refresh_aws_host();
        Ok(self)
    }

    /// The signing region (`us-east-1` for the pseudo-region `aws-global`).
    pub fn region(&self) -> &str {
        if self.region == AWS_GLOBAL {
            "us-east-1"
        } else {
            &self.region
        }
    }

    /// The host (with port, if any) that requests without a bucket go to.
    pub fn host(&self) -> &str {
        &self.authority
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The base path prepended to every request path (empty for AWS).
    pub fn base_path(&self) -> &str {
        &self.base_path
    }

    /// The configured addressing style (before [`AddressingStyle::Auto`] is resolved).
    pub fn addressing_style(&self) -> AddressingStyle {
        self.style
    }

    /// True for AWS endpoints made by [`Endpoint::aws`].
    pub fn is_aws(&self) -> bool {
        !self.custom
    }

    /// Whether FIPS, dual-stack and Transfer Acceleration hosts are asked for.
    pub fn variants(&self) -> (bool, bool, bool) {
        (self.fips, self.dual_stack, self.accelerate)
    }

    /// Whether requests to S3 Express buckets are signed with session credentials.
    pub fn s3_express_session_auth(&self) -> bool {
        self.express_session_auth
    }

    /// Fails for combinations AWS does not offer: Transfer Acceleration with FIPS, a custom
    /// endpoint with any of FIPS, dual-stack or acceleration, FIPS in the China partition.
    /// Every request checks it before it is built.
    pub fn check(&self) -> Result<(), Error> {
        let reason = if self.accelerate && self.fips {
            "Transfer Acceleration cannot be used with FIPS: turn one of them off"
        } else if self.custom && self.dual_stack {
            "dual-stack cannot be combined with a custom endpoint (it names its own host): \
             turn dual-stack off or remove the endpoint URL"
        } else if self.custom && self.fips {
            "a custom endpoint cannot be combined with FIPS (FIPS chooses AWS's own hosts): \
             turn FIPS off or remove the endpoint URL"
        } else if self.custom && self.accelerate {
            "a custom endpoint cannot be combined with S3 Transfer Acceleration: turn \
             acceleration off or remove the endpoint URL"
        } else if self.fips && self.partition().name == "aws-cn" {
            "the partition of this region (aws-cn) does not support FIPS endpoints"
        } else {
            return Ok(());
        };
        Err(InvalidInput::Endpoint {
            reason: format!("region {}: {reason}", self.region),
        }
        .into())
    }

    /// Whether `bucket` is put into the host name (resolving [`AddressingStyle::Auto`]).
    /// Fails where the rules refuse the combination (path-style for an ARN, for instance).
    pub fn uses_virtual_host(&self, bucket: &BucketName) -> Result<bool, Error> {
        let address = self.address(Some(bucket), None, "", Route::Data, false, None)?;
        Ok(address.uri.host() != Some(self.host_without_port()))
    }

    /// The request URI for an optional bucket and key plus an already-encoded query string
    /// (without `?`; empty for none), for an object-level operation. The path is exactly
    /// what SigV4 canonicalizes for S3: the key is percent-encoded byte for byte, `/` kept,
    /// nothing normalized.
    pub fn uri(
        &self,
        bucket: Option<&BucketName>,
        key: Option<&ObjectKey>,
        query: &str,
    ) -> Result<Uri, Error> {
        self.address(
            bucket,
            key.map(ObjectKey::as_str),
            query,
            Route::Data,
            false,
            None,
        )
        .map(|address| address.uri)
    }

    /// The URI of a request and the signature it needs. `key` is the object key (or a fixed
    /// path such as `WriteGetObjectResponse`); `iam_auth` signs a request to an S3 Express
    /// bucket with the caller's credentials instead of the bucket's session credentials
    /// (CreateSession itself, CopyObject, HeadBucket); `host_prefix` goes in front of the
    /// host (WriteGetObjectResponse's request route).
    pub(crate) fn address(
        &self,
        bucket: Option<&BucketName>,
        key: Option<&str>,
        query: &str,
        route: Route,
        iam_auth: bool,
        host_prefix: Option<&str>,
    ) -> Result<Address, Error> {
        self.check()?;
        let mut target = Target::new(self);
        target.host_prefix = host_prefix;
        match bucket {
            None => self.address_service(route, &mut target)?,
            Some(bucket) => match bucket.kind() {
                BucketKind::Directory { zone_id }
                | BucketKind::DirectoryAccessPoint { zone_id } => {
                    self.address_express(bucket, zone_id, route, iam_auth, &mut target)?
                }
                BucketKind::OutpostsAccessPointAlias { outpost_id } => {
                    self.address_outposts_alias(bucket, outpost_id, &mut target)?
                }
                BucketKind::GeneralPurpose | BucketKind::AccessPointAlias => {
                    self.address_bucket(bucket, route, &mut target)?
                }
                _ => self.address_arn(bucket, &mut target)?,
            },
        }
        target.finish(key, query)
    }

    /// A request without a bucket: the service's regional host, the S3 Express control
    /// endpoint, or Object Lambda's.
    fn address_service(&self, route: Route, target: &mut Target) -> Result<(), Error> {
        match route {
            Route::DirectoryControl => {
                target.signing = SigningScope::default()
                    .in_region(&self.region, self)
                    .for_service("s3express");
                if !self.custom {
                    target.host = self.variant_host("s3express-control", &self.region);
                }
            }
            Route::ObjectLambda => {
                self.require_region_labels()?;
                if self.dual_stack || self.accelerate {
                    return Err(self.unsupported(
                        "S3 Object Lambda",
                        if self.dual_stack {
                            "dual-stack endpoints"
                        } else {
                            "Transfer Acceleration"
                        },
                    ));
                }
                target.signing = SigningScope::default()
                    .in_region(&self.region, self)
                    .for_service("s3-object-lambda");
                if !self.custom {
                    target.host = self.variant_host("s3-object-lambda", &self.region);
                }
            }
            Route::Data | Route::BucketControl => self.require_region_labels()?,
        }
        Ok(())
    }

    /// An S3 Express One Zone directory bucket or access point: the zone's endpoint
    /// (`<bucket>.s3express[-fips]-<zone>[.dualstack].<region>`), the control endpoint for a
    /// directory bucket's bucket-level operations, or the custom endpoint's host.
    fn address_express(
        &self,
        bucket: &BucketName,
        zone_id: &str,
        route: Route,
        iam_auth: bool,
        target: &mut Target,
    ) -> Result<(), Error> {
        if self.accelerate {
            return Err(self.unsupported("S3 Express One Zone", "Transfer Acceleration"));
        }
        let control = route == Route::BucketControl;
        let mut signing = SigningScope::default()
            .in_region(&self.region, self)
            .for_service("s3express");
        if self.express_session_auth && !iam_auth && !control {
            signing = signing.with_session_of(bucket.as_str());
        }
        target.signing = signing;
        if self.custom {
            if is_ip_authority(&self.authority) {
                // The rules put the bucket before the endpoint's base path here.
                target.path_bucket_before_base = true;
                target.path_bucket = Some(bucket.as_str().to_owned());
            } else {
                target.host = format!("{bucket}.{}", self.authority);
            }
        } else if control && bucket.is_directory_bucket() {
            target.host = self.variant_host("s3express-control", &self.region);
            target.path_bucket = Some(bucket.as_str().to_owned());
        } else if zone_id.is_empty() {
            return Err(InvalidInput::BucketName {
                name: bucket.as_str().to_owned(),
                reason: crate::names::UNRECOGNIZED_EXPRESS_NAME,
            }
            .into());
        } else {
            let service = if self.fips {
                format!("s3express-fips-{zone_id}")
            } else {
                format!("s3express-{zone_id}")
            };
            let dual = if self.dual_stack { ".dualstack" } else { "" };
            target.host = format!(
                "{bucket}.{service}{dual}.{}.{}",
                self.region,
                self.partition().dns_suffix
            );
        }
        Ok(())
    }

    /// An S3 on Outposts access point alias: the Outpost's `s3-outposts` host in the
    /// client's region (a beta Outpost's only through a custom endpoint), signed for
    /// `s3-outposts`.
    fn address_outposts_alias(
        &self,
        bucket: &BucketName,
        outpost_id: Option<&str>,
        target: &mut Target,
    ) -> Result<(), Error> {
        let outpost = match outpost_id {
            Some(id) => format!("op-{id}"),
            None => "ec2".to_owned(),
        };
        target.scheme = Scheme::Https;
        target.without_base_path = true;
        target.signing = SigningScope::default()
            .in_region(&self.region, self)
            .for_service("s3-outposts")
            .for_every_region_or_own();
        target.host = if is_beta_outposts_alias(bucket.as_str()) {
            if !self.custom {
                return Err(InvalidInput::Endpoint {
                    reason: format!(
                        "{bucket} is an access point alias of a beta Outpost, which is reached \
                         only through an explicit endpoint: expected an endpoint to be \
                         specified but none was found"
                    ),
                }
                .into());
            }
            format!("{bucket}.{outpost}.{}", self.authority)
        } else if self.custom {
            // The rules would send it to the Outpost's AWS host, around the endpoint the
            // client was given: refused instead.
            return Err(InvalidInput::Endpoint {
                reason: format!(
                    "{bucket} is an Outposts access point alias, reached through its Outpost's \
                     s3-outposts endpoint, not the custom endpoint {}: remove the endpoint URL",
                    self.authority
                ),
            }
            .into());
        } else {
            format!(
                "{bucket}.{outpost}.s3-outposts.{}.{}",
                self.region,
                self.partition().dns_suffix
            )
        };
        Ok(())
    }

    /// A general-purpose bucket (or access point alias): virtual-hosted where the style and
    /// the name allow it, through Transfer Acceleration if asked, path-style otherwise.
    fn address_bucket(
        &self,
        bucket: &BucketName,
        route: Route,
        target: &mut Target,
    ) -> Result<(), Error> {
        let virtual_allowed = match self.style {
            AddressingStyle::Path => false,
            AddressingStyle::Auto => !self.custom,
            AddressingStyle::VirtualHosted => true,
        };
        // Dotted names over plain HTTP to a named custom host (the rules also put them in
        // front of an IP address, which makes no host: kept in the path there).
        let virtual_host = virtual_allowed
            && (bucket.is_virtual_hostable(false)
                || (self.custom
                    && self.scheme == Scheme::Http
                    && !is_ip_authority(&self.authority)
                    && bucket.is_virtual_hostable(true)));
        if !virtual_host {
            if self.accelerate && route != Route::BucketControl {
                return Err(InvalidInput::Endpoint {
                    reason: format!(
                        "path-style addressing cannot be used with S3 Transfer Acceleration \
                         ({bucket:?} {})",
                        if virtual_allowed {
                            "is not a bucket name its hosts take: a DNS label without '.'"
                        } else {
                            "is addressed path-style by configuration"
                        }
                    ),
                }
                .into());
            }
            target.path_bucket = Some(bucket.as_str().to_owned());
            return Ok(());
        }
        if !is_valid_host_label(&self.region, false) {
            return Err(self.invalid_region());
        }
        if self.custom && is_ip_authority(&self.authority) {
            target.path_bucket = Some(bucket.as_str().to_owned());
        } else if self.accelerate && route != Route::BucketControl {
            if self.partition().name == "aws-cn" {
                return Err(InvalidInput::Endpoint {
                    reason: format!(
                        "S3 Transfer Acceleration cannot be used in this region ({}): the aws-cn \
                         partition has none",
                        self.region
                    ),
                }
                .into());
            }
            let dual = match (self.dual_stack, self.region.as_str()) {
                (false, _) => "",
                // The rules' host for the global pseudo-region names us-east-1.
                (true, AWS_GLOBAL) => ".dualstack.us-east-1",
                (true, _) => ".dualstack",
            };
            target.host = format!(
                "{bucket}.s3-accelerate{dual}.{}",
                self.partition().dns_suffix
            );
        } else {
            target.host = format!("{bucket}.{}", self.authority);
        }
        Ok(())
    }

    /// An access point, Object Lambda access point, Outposts access point or Multi-Region
    /// Access Point ARN.
    fn address_arn(&self, bucket: &BucketName, target: &mut Target) -> Result<(), Error> {
        if self.style == AddressingStyle::Path {
            return Err(InvalidInput::Endpoint {
                reason: format!(
                    "path-style addressing cannot be used with ARN buckets ({bucket}): turn \
                     path-style off (force_path_style, addressing_style) for access points"
                ),
            }
            .into());
        }
        match bucket.kind() {
            BucketKind::AccessPoint(arn) | BucketKind::ObjectLambdaAccessPoint(arn) => {
                let object_lambda = matches!(bucket.kind(), BucketKind::ObjectLambdaAccessPoint(_));
                if object_lambda && self.dual_stack {
                    return Err(self.unsupported("S3 Object Lambda", "dual-stack endpoints"));
                }
                if object_lambda && self.accelerate {
                    return Err(self.unsupported("S3 Object Lambda", "Transfer Acceleration"));
                }
                let arn_partition = self.check_arn_region(bucket, arn.region)?;
                if !object_lambda && self.accelerate {
                    return Err(self.unsupported("access points", "Transfer Acceleration"));
                }
                let service = if object_lambda {
                    "s3-object-lambda"
                } else {
                    "s3"
                };
                target.signing = SigningScope::default()
                    .in_region(arn.region, self)
                    .for_service(service);
                let label = format!("{}-{}", arn.name, arn.account_id);
                target.host = if self.custom {
                    format!("{label}.{}", self.authority)
                } else {
                    let host = if object_lambda {
                        "s3-object-lambda"
                    } else {
                        "s3-accesspoint"
                    };
                    let fips = if self.fips { "-fips" } else { "" };
                    let dual = if self.dual_stack { ".dualstack" } else { "" };
                    format!(
                        "{label}.{host}{fips}{dual}.{}.{}",
                        arn.region, arn_partition.dns_suffix
                    )
                };
            }
            BucketKind::OutpostsAccessPoint { arn, outpost_id } => {
                for (on, variant) in [
                    (self.dual_stack, "dual-stack endpoints"),
                    (self.fips, "FIPS endpoints"),
                    (self.accelerate, "Transfer Acceleration"),
                ] {
                    if on {
                        return Err(self.unsupported("S3 on Outposts", variant));
                    }
                }
                let arn_partition = self.check_arn_region(bucket, arn.region)?;
                target.scheme = Scheme::Https;
                target.without_base_path = true;
                target.signing = SigningScope::default()
                    .in_region(arn.region, self)
                    .for_service("s3-outposts")
                    .for_every_region_or_own();
                let label = format!("{}-{}.{outpost_id}", arn.name, arn.account_id);
                target.host = if self.custom {
                    format!("{label}.{}", self.authority)
                } else {
                    format!(
                        "{label}.s3-outposts.{}.{}",
                        arn.region, arn_partition.dns_suffix
                    )
                };
            }
            BucketKind::MultiRegionAccessPoint { alias } => {
                for (on, variant) in [
                    (self.dual_stack, "dual-stack endpoints"),
                    (self.fips, "FIPS endpoints"),
                    (self.accelerate, "Transfer Acceleration"),
                ] {
                    if on {
                        return Err(self.unsupported("Multi-Region Access Points", variant));
                    }
                }
                if self.custom {
                    // The rules would send it to AWS's global host, around the endpoint
                    // the client was given: refused instead.
                    return Err(InvalidInput::Endpoint {
                        reason: format!(
                            "Multi-Region Access Points are reached only through AWS's global \
                             endpoint, not the custom endpoint {}: remove the endpoint URL for \
                             {bucket}",
                            self.authority
                        ),
                    }
                    .into());
                }
                if !self.multi_region_access_points {
                    return Err(InvalidInput::Endpoint {
                        reason: format!(
                            "Multi-Region Access Point ARNs are disabled by configuration \
                             (s3_disable_multiregion_access_points, \
                             AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS): {bucket}"
                        ),
                    }
                    .into());
                }
                let own = self.partition();
                let named = bucket.multi_region_partition().unwrap_or_default();
                if own.name != named {
                    return Err(self.partition_mismatch(bucket, own, named));
                }
                target.scheme = Scheme::Https;
                target.signing = SigningScope::default().for_every_region();
                target.host = format!("{alias}.accesspoint.s3-global.{}", own.dns_suffix);
            }
            _ => unreachable!("address_arn is called for ARNs"),
        }
        Ok(())
    }

    /// An access point ARN in `region` can be reached from this endpoint: the same
    /// partition, and the same region unless `use_arn_region` allows another. Returns the
    /// ARN region's partition.
    fn check_arn_region(&self, bucket: &BucketName, region: &str) -> Result<Partition, Error> {
        if region != self.region && !self.use_arn_region {
            return Err(InvalidInput::Endpoint {
                reason: format!(
                    "invalid configuration: the region of the ARN {bucket} ({region}) does not \
                     match the client's region ({}) and use_arn_region is off: turn it on \
                     (ClientBuilder::use_arn_region, AWS_S3_USE_ARN_REGION) or use a client \
                     for {region}",
                    self.region
                ),
            }
            .into());
        }
        let own = self.partition();
        let theirs = partition::of_region(region);
        if own.name != theirs.name {
            return Err(self.partition_mismatch(bucket, own, theirs.name));
        }
        Ok(theirs)
    }

    fn partition_mismatch(&self, bucket: &BucketName, own: Partition, theirs: &str) -> Error {
        InvalidInput::Endpoint {
            reason: format!(
                "the client is configured for partition {} (region {}), but the ARN {bucket} \
                 refers to partition {theirs}",
                own.name, self.region
            ),
        }
        .into()
    }

    fn unsupported(&self, what: &str, variant: &str) -> Error {
        InvalidInput::Endpoint {
            reason: format!("{what} cannot be used with {variant}"),
        }
        .into()
    }

    fn invalid_region(&self) -> Error {
        InvalidInput::Endpoint {
            reason: format!(
                "invalid region {:?}: not a valid DNS name for a host (letters, digits and '-')",
                self.region
            ),
        }
        .into()
    }

    /// The region may be several host labels joined by `.`.
    fn require_region_labels(&self) -> Result<(), Error> {
        if is_valid_host_label(&self.region, true) {
            Ok(())
        } else {
            Err(self.invalid_region())
        }
    }

    fn partition(&self) -> Partition {
        partition::of_region(&self.region)
    }

    /// `<service>[-fips][.dualstack].<region>.<suffix>`.
    fn variant_host(&self, service: &str, region: &str) -> String {
        let fips = if self.fips { "-fips" } else { "" };
        let dual = if self.dual_stack { ".dualstack" } else { "" };
        format!(
            "{service}{fips}{dual}.{region}.{}",
            partition::of_region(region).dns_suffix
        )
    }

    /// The regional host of requests without a bucket and of general-purpose buckets:
    /// `s3[-fips][.dualstack].<region>.<suffix>`, the global `s3.amazonaws.com` for
    /// `aws-global` (and for `us-east-1` with the global endpoint), `us-east-1`'s FIPS and
    /// dual-stack hosts for `aws-global` with those.
    fn refresh_aws_host(&mut self) {
        if self.custom {
            return;
        }
        let global = self.region == AWS_GLOBAL;
        let legacy = global || (self.global_endpoint && self.region == "us-east-1");
        self.authority = if legacy && !self.fips && !self.dual_stack {
            format!("s3.{}", self.partition().dns_suffix)
        } else {
            let region = if global { "us-east-1" } else { &self.region };
            self.variant_host("s3", region)
        };
    }

    /// The authority without its port (`[::1]` for IPv6, as `Uri::host` gives it).
    fn host_without_port(&self) -> &str {
        let authority = self.authority.as_str();
        if authority.starts_with('[') {
            return authority
                .find(']')
                .map_or(authority, |end| &authority[..=end]);
        }
        authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host)
    }
}

/// A request's address as it is worked out: scheme, host, a bucket for the path, and the
/// signature it needs.
struct Target<'a> {
    endpoint: &'a Endpoint,
    scheme: Scheme,
    host: String,
    path_bucket: Option<String>,
    path_bucket_before_base: bool,
    /// S3 on Outposts takes the custom endpoint's host alone, over HTTPS.
    without_base_path: bool,
    host_prefix: Option<&'a str>,
    signing: SigningScope,
}

impl<'a> Target<'a> {
    fn new(endpoint: &'a Endpoint) -> Self {
        Target {
            endpoint,
            scheme: endpoint.scheme,
            host: endpoint.authority.clone(),
            path_bucket: None,
            path_bucket_before_base: false,
            without_base_path: false,
            host_prefix: None,
            signing: SigningScope::default(),
        }
    }

    fn finish(self, key: Option<&str>, query: &str) -> Result<Address, Error> {
        let base = if self.without_base_path {
            ""
        } else {
            &self.endpoint.base_path
        };
        let mut path = String::with_capacity(base.len() + 2 + key.map_or(0, |k| k.len() * 3) + 64);
        let push_bucket = |path: &mut String, bucket: &str| {
            path.push('/');
            crate::encoding::push_path_encoded(path, bucket);
        };
        match &self.path_bucket {
            Some(bucket) if self.path_bucket_before_base => {
                push_bucket(&mut path, bucket);
                path.push_str(base);
            }
            Some(bucket) => {
                path.push_str(base);
                push_bucket(&mut path, bucket);
            }
            None => path.push_str(base),
        }
        if key.is_some() || self.path_bucket.is_none() {
            path.push('/');
        }
        if let Some(key) = key {
            crate::encoding::push_path_encoded(&mut path, key);
        }
        let scheme = self.scheme.as_str();
        let mut uri = String::with_capacity(
            scheme.len() + 3 + self.host.len() + path.len() + query.len() + 1,
        );
        uri.push_str(scheme);
        uri.push_str("://");
        if let Some(prefix) = self.host_prefix {
            uri.push_str(prefix);
            uri.push('.');
        }
        uri.push_str(&self.host);
        uri.push_str(&path);
        if !query.is_empty() {
            uri.push('?');
            uri.push_str(query);
        }
        let uri = Uri::try_from(uri).map_err(|e| {
            Error::from(InvalidInput::Endpoint {
                reason: format!("cannot build request URI: {e}"),
            })
        })?;
        Ok(Address {
            uri,
            signing: self.signing,
        })
    }
}

/// True if `authority` (`host[:port]`) names an IP address rather than a host name.
fn is_ip_authority(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(_) => return true,
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    host.parse::<std::net::Ipv4Addr>().is_ok()
}

/// A region goes into host names and credential scopes: lowercase host labels (several,
/// joined by `.`, for the few routes that allow it).
fn validate_region(region: &str) -> Result<(), Error> {
    if region.is_empty() {
        return Err(InvalidInput::Endpoint {
            reason: "no region is set: S3 requests need one (AWS_REGION, region in the \
                     profile, ClientBuilder::region)"
                .to_owned(),
        }
        .into());
    }
    let valid = region.len() <= 63
        && is_valid_host_label(region, true)
        && !region.bytes().any(|b| b.is_ascii_uppercase());
    if valid {
        Ok(())
    } else {
        Err(InvalidInput::Endpoint {
            reason: format!(
                "invalid region {region:?}: not a valid DNS name (lowercase letters, digits \
                 and '-', such as us-east-1)"
            ),
        }
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(name: &str) -> BucketName {
        BucketName::new(name).unwrap()
    }

    fn key(k: &str) -> ObjectKey {
        ObjectKey::new(k).unwrap()
    }

    #[test]
    fn aws_hosts_for_every_variant() {
        let cases = [
            (false, false, "us-west-2", "s3.us-west-2.amazonaws.com"),
            (
                true,
                false,
                "us-west-2",
                "s3.dualstack.us-west-2.amazonaws.com",
            ),
            (false, true, "us-west-2", "s3-fips.us-west-2.amazonaws.com"),
            (
                true,
                true,
                "us-west-2",
                "s3-fips.dualstack.us-west-2.amazonaws.com",
            ),
            (false, false, "cn-north-1", "s3.cn-north-1.amazonaws.com.cn"),
        ];
        for (dual, fips, region, host) in cases {
            let endpoint = Endpoint::aws(region)
                .unwrap()
                .with_dual_stack(dual)
                .with_fips(fips);
            assert_eq!(endpoint.host(), host);
            assert_eq!(endpoint.region(), region);
        }
        assert_eq!(
            Endpoint::aws("us-west-2")
                .unwrap()
                .with_region("eu-central-1")
                .unwrap()
                .host(),
            "s3.eu-central-1.amazonaws.com"
        );
    }

    #[test]
    fn aws_defaults_to_virtual_hosted_when_possible() {
        let endpoint = Endpoint::aws("us-east-1").unwrap();
        assert_eq!(
            endpoint
                .uri(Some(&bucket("photos")), Some(&key("a b.jpg")), "")
                .unwrap(),
            "https://photos.s3.us-east-1.amazonaws.com/a%20b.jpg"
        );
        // Dots break the wildcard certificate over HTTPS: fall back to path-style.
        assert_eq!(
            endpoint
                .uri(Some(&bucket("my.photos")), Some(&key("k")), "")
                .unwrap(),
            "https://s3.us-east-1.amazonaws.com/my.photos/k"
        );
        let legacy = BucketName::new_relaxed("Legacy_Bucket").unwrap();
        assert_eq!(
            endpoint.uri(Some(&legacy), None, "").unwrap(),
            "https://s3.us-east-1.amazonaws.com/Legacy_Bucket"
        );
        assert_eq!(
            endpoint.uri(None, None, "").unwrap(),
            "https://s3.us-east-1.amazonaws.com/"
        );
    }

    #[test]
    fn custom_endpoints_default_to_path_style_and_keep_base_path() {
        let endpoint = Endpoint::custom("http://LocalHost:9000/base/path/", "us-east-1").unwrap();
        assert_eq!(endpoint.base_path(), "/base/path");
        assert_eq!(
            endpoint
                .uri(Some(&bucket("bk1")), Some(&key("/x//y")), "uploads")
                .unwrap(),
            "http://localhost:9000/base/path/bk1//x//y?uploads"
        );
        assert_eq!(
            endpoint.uri(Some(&bucket("bk1")), None, "").unwrap(),
            "http://localhost:9000/base/path/bk1"
        );
        let virtual_hosted = endpoint.with_addressing_style(AddressingStyle::VirtualHosted);
        assert_eq!(
            virtual_hosted
                .uri(Some(&bucket("bk1")), Some(&key("k")), "")
                .unwrap(),
            "http://bk1.localhost:9000/base/path/k"
        );
        let legacy = BucketName::new_relaxed("Legacy_Bucket").unwrap();
        // A name that cannot be a host label stays in the path, as the SDKs do.
        assert_eq!(
            virtual_hosted.uri(Some(&legacy), None, "").unwrap(),
            "http://localhost:9000/base/path/Legacy_Bucket"
        );
    }

    #[test]
    fn aws_path_style_override() {
        let endpoint = Endpoint::aws("eu-west-1")
            .unwrap()
            .with_addressing_style(AddressingStyle::Path);
        assert_eq!(
            endpoint
                .uri(Some(&bucket("bk1")), Some(&key("k")), "")
                .unwrap(),
            "https://s3.eu-west-1.amazonaws.com/bk1/k"
        );
    }

    const MRAP_ARN: &str = "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap";

    #[test]
    fn multi_region_access_points_use_their_global_host() {
        let mrap = bucket(MRAP_ARN);
        for endpoint in [
            Endpoint::aws("us-east-1").unwrap(),
            Endpoint::aws("eu-west-1").unwrap(),
            Endpoint::aws("us-east-1")
                .unwrap()
                .with_addressing_style(AddressingStyle::VirtualHosted),
        ] {
            assert_eq!(endpoint.uses_virtual_host(&mrap), Ok(true));
            assert_eq!(
                endpoint
                    .uri(Some(&mrap), Some(&key("photos/a b.jpg")), "versionId=v1")
                    .unwrap(),
                "https://mfzwi23gnjvgw.mrap.accesspoint.s3-global.amazonaws.com/photos/a%20b.jpg?versionId=v1"
            );
            assert_eq!(
                endpoint.uri(Some(&mrap), None, "list-type=2").unwrap(),
                "https://mfzwi23gnjvgw.mrap.accesspoint.s3-global.amazonaws.com/?list-type=2"
            );
            // Requests without a bucket still go to the regional host.
            assert_eq!(
                endpoint.uri(None, None, "").unwrap().host(),
                Some(endpoint.host())
            );
        }
    }

    #[test]
    fn multi_region_access_points_reject_endpoints_aws_does_not_offer_them_on() {
        let mrap = bucket(MRAP_ARN);
        let aws = Endpoint::aws("us-east-1").unwrap();
        let cases = [
            (
                Endpoint::custom("https://storage.example.com", "us-east-1").unwrap(),
                "not the custom endpoint",
            ),
            (
                Endpoint::custom("http://127.0.0.1:9000", "us-east-1")
                    .unwrap()
                    .with_addressing_style(AddressingStyle::VirtualHosted),
                "not the custom endpoint",
            ),
            (aws.clone().with_dual_stack(true), "dual-stack"),
            (aws.clone().with_fips(true), "FIPS"),
            (
                aws.clone().with_dual_stack(true).with_fips(true),
                "dual-stack",
            ),
            (
                aws.clone().with_multi_region_access_points(false),
                "disabled by configuration",
            ),
            (
                aws.clone().with_addressing_style(AddressingStyle::Path),
                "path-style",
            ),
            (Endpoint::aws("cn-north-1").unwrap(), "partition aws-cn"),
            (
                Endpoint::aws("us-gov-west-1").unwrap(),
                "partition aws-us-gov",
            ),
        ];
        for (endpoint, fragment) in cases {
            for result in [
                endpoint.uri(Some(&mrap), Some(&key("k")), "").map(|_| ()),
                endpoint.uses_virtual_host(&mrap).map(|_| ()),
            ] {
                match result {
                    Err(Error::InvalidInput(InvalidInput::Endpoint { reason })) => {
                        assert!(reason.contains(fragment), "{endpoint:?}: {reason}");
                    }
                    other => panic!("{endpoint:?}: {other:?}"),
                }
            }
        }
        // GovCloud keeps its regional host name.
        assert_eq!(
            Endpoint::aws("us-gov-west-1").unwrap().host(),
            "s3.us-gov-west-1.amazonaws.com"
        );
    }

    #[test]
    fn rejects_bad_endpoints() {
        for url in [
            "ftp://host",
            "localhost:9000",
            "http://user:pw@host",
            "http://host/?q=1",
            "http://host/a b",
        ] {
            assert!(
                matches!(
                    Endpoint::custom(url, "us-east-1"),
                    Err(Error::InvalidInput(InvalidInput::Endpoint { .. }))
                ),
                "{url}"
            );
        }
        assert!(Endpoint::aws("US-EAST-1").is_err());
        assert!(Endpoint::aws("").is_err());
        assert!(Endpoint::custom("http://h", "eu/west").is_err());
    }
}
