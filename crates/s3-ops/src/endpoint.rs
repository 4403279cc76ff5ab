//! Where requests go: AWS regional endpoints or custom S3-compatible URLs, and how a
//! bucket is addressed (path-style or virtual-hosted).

use http::Uri;

use crate::error::{Error, InvalidInput};
use crate::names::{BucketKind, BucketName, ObjectKey};
use crate::signing::SigningScope;

/// How the bucket appears in a request URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AddressingStyle {
    /// Virtual-hosted for AWS when the bucket name is DNS-compatible (and, over HTTPS,
    /// has no dots, which the wildcard certificate would not cover); path-style for custom
    /// endpoints.
    #[default]
    Auto,
    /// `https://host/bucket/key`.
    Path,
    /// `https://bucket.host/key`.
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

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Provider {
    Aws {
        dual_stack: bool,
        fips: bool,
        accelerate: bool,
    },
    Custom,
}

/// Where an operation is served, when the bucket alone does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Object-level (data plane): the bucket's own host.
    Data,
    /// Bucket-level (control plane: CreateBucket, DeleteBucket, bucket configuration): a
    /// directory bucket's is its region's `s3express-control` endpoint, path-style; Transfer
    /// Acceleration does not apply.
    BucketControl,
    /// The S3 Express control endpoint without a bucket (ListDirectoryBuckets).
    DirectoryControl,
}

/// The URI of one request and how it must be signed.
pub(crate) struct Address {
    pub(crate) uri: Uri,
    pub(crate) signing: SigningScope,
}

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
    /// Host with optional `:port`, lower-case.
    authority: String,
    /// Empty, or `/segment[/segment...]` without a trailing slash.
    base_path: String,
    region: String,
    style: AddressingStyle,
    provider: Provider,
    /// Whether a request to an access point ARN of another region than `region` goes to
    /// (and is signed for) the ARN's region, or fails.
    use_arn_region: bool,
}

impl Endpoint {
    /// The AWS regional endpoint `https://s3.<region>.amazonaws.com` (the partition's DNS
    /// suffix, such as `.amazonaws.com.cn` for China regions).
    pub fn aws(region: &str) -> Result<Self, Error> {
        validate_region(region)?;
        let mut endpoint = Endpoint {
            scheme: Scheme::Https,
            authority: String::new(),
            base_path: String::new(),
            region: region.to_owned(),
            style: AddressingStyle::Auto,
            provider: Provider::Aws {
                dual_stack: false,
                fips: false,
                accelerate: false,
            },
            use_arn_region: true,
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
                reason: format!("{url:?}: {reason}"),
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
            provider: Provider::Custom,
            use_arn_region: true,
        })
    }

    /// Uses the dual-stack (IPv4 + IPv6) AWS hosts. No effect on custom endpoints.
    pub fn with_dual_stack(mut self, enabled: bool) -> Self {
        if let Provider::Aws { dual_stack, .. } = &mut self.provider {
            *dual_stack = enabled;
        }
        self.refresh_aws_host();
        self
    }

    /// Uses the FIPS 140 AWS hosts. No effect on custom endpoints. Only some regions have
    /// them: requests through this endpoint fail before sending anywhere else (see
    /// [`Endpoint::check`]).
    pub fn with_fips(mut self, enabled: bool) -> Self {
        if let Provider::Aws { fips, .. } = &mut self.provider {
            *fips = enabled;
        }
        self.refresh_aws_host();
        self
    }

    /// Sends object requests to S3 Transfer Acceleration
    /// (`<bucket>.s3-accelerate[.dualstack].amazonaws.com`). Bucket-level operations keep
    /// the regional host. No effect on custom endpoints.
    pub fn with_accelerate(mut self, enabled: bool) -> Self {
        if let Provider::Aws { accelerate, .. } = &mut self.provider {
            *accelerate = enabled;
        }
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

    /// The signing region.
    pub fn region(&self) -> &str {
        &self.region
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
        matches!(self.provider, Provider::Aws { .. })
    }

    /// Whether FIPS, dual-stack and Transfer Acceleration hosts are used (all false for a
    /// custom endpoint).
    pub fn variants(&self) -> (bool, bool, bool) {
        match self.provider {
            Provider::Aws {
                fips,
                dual_stack,
                accelerate,
            } => (fips, dual_stack, accelerate),
            Provider::Custom => (false, false, false),
        }
    }

    /// Fails for combinations of FIPS, dual-stack and Transfer Acceleration AWS does not
    /// offer in this endpoint's region: FIPS where S3 has no FIPS host (and never with
    /// acceleration), dual-stack in a partition without IPv6 hosts, acceleration outside
    /// the commercial partition. Every request checks it before it is built.
    pub fn check(&self) -> Result<(), Error> {
        let Provider::Aws {
            dual_stack,
            fips,
            accelerate,
        } = self.provider
        else {
            return Ok(());
        };
        let partition = crate::partition::of_region(&self.region);
        let fips_regions = crate::partition::S3_FIPS_REGIONS;
        let reason = if fips && accelerate {
            "Transfer Acceleration has no FIPS endpoint: turn one of them off".to_owned()
        } else if fips && !fips_regions.contains(&self.region.as_str()) {
            format!(
                "S3 has no FIPS endpoint in this region (FIPS hosts exist in {})",
                fips_regions.join(", ")
            )
        } else if dual_stack && !partition.dual_stack {
            "this region's partition has no dual-stack S3 endpoints".to_owned()
        } else if accelerate && partition.name != "aws" {
            "Transfer Acceleration exists only in the commercial AWS regions".to_owned()
        } else {
            return Ok(());
        };
        Err(InvalidInput::Endpoint {
            reason: format!("region {}: {reason}", self.region),
        }
        .into())
    }

    /// Whether `bucket` is put into the host name (resolving [`AddressingStyle::Auto`]).
    /// Fails if virtual-hosted addressing is forced for a name that cannot be a DNS label,
    /// or path-style for a name that only has a virtual-hosted form.
    ///
    /// Access points of every kind, their aliases and directory buckets are always in the
    /// host name: AWS offers no path-style form for them.
    pub fn uses_virtual_host(&self, bucket: &BucketName) -> Result<bool, Error> {
        let only_virtual = |what: &str| -> Result<bool, Error> {
            match self.style {
                AddressingStyle::Path if self.is_aws() => Err(InvalidInput::Endpoint {
                    reason: format!("{what} cannot be addressed path-style"),
                }
                .into()),
                _ => Ok(true),
            }
        };
        match bucket.kind() {
            BucketKind::MultiRegionAccessPoint { .. } => {
                self.check_multi_region_access_point().map(|()| true)
            }
            BucketKind::AccessPoint(_) | BucketKind::ObjectLambdaAccessPoint(_) => {
                only_virtual("an access point ARN")
            }
            BucketKind::AccessPointAlias if self.is_aws() => only_virtual("an access point alias"),
            BucketKind::Directory { .. } if self.is_aws() => Ok(true),
            _ => match self.style {
                AddressingStyle::Path => Ok(false),
                AddressingStyle::VirtualHosted if bucket.is_dns_compatible() => Ok(true),
                AddressingStyle::VirtualHosted => Err(InvalidInput::BucketName {
                    name: bucket.as_str().to_owned(),
                    reason: "cannot be used with virtual-hosted addressing (not DNS-compatible)",
                }
                .into()),
                AddressingStyle::Auto => Ok(self.is_aws()
                    && bucket.is_dns_compatible()
                    && !(self.scheme == Scheme::Https && bucket.as_str().contains('.'))),
            },
        }
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
        self.address(bucket, key, query, Route::Data, false)
            .map(|address| address.uri)
    }

    /// The URI of a request and the signature it needs. `iam_auth` signs a request to a
    /// directory bucket with the caller's credentials instead of the bucket's session
    /// credentials (CreateSession itself, CopyObject, HeadBucket).
    pub(crate) fn address(
        &self,
        bucket: Option<&BucketName>,
        key: Option<&ObjectKey>,
        query: &str,
        route: Route,
        iam_auth: bool,
    ) -> Result<Address, Error> {
        self.check()?;
        let (_, dual_stack, accelerate) = self.variants();
        let mut signing = SigningScope::default();
        let mut host = String::with_capacity(self.authority.len() + 64);
        let mut path = String::with_capacity(
            self.base_path.len() + 2 + key.map_or(0, |k| k.as_str().len() * 3) + 64,
        );
        path.push_str(&self.base_path);
        path.push('/');
        let mut path_style_bucket = None;
        match bucket {
            None if route == Route::DirectoryControl => {
                signing = signing.for_service("s3express");
                self.push_directory_control_host(&mut host);
            }
            None => host.push_str(&self.authority),
            Some(bucket) => match bucket.kind() {
                BucketKind::MultiRegionAccessPoint { alias } => {
                    self.check_multi_region_access_point()?;
                    if accelerate {
                        return Err(
                            self.unsupported("Multi-Region Access Points", "Transfer Acceleration")
                        );
                    }
                    signing = signing.for_every_region();
                    host.push_str(alias);
                    host.push_str(MRAP_HOST_SUFFIX);
                }
                BucketKind::AccessPoint(arn) | BucketKind::ObjectLambdaAccessPoint(arn) => {
                    let object_lambda =
                        matches!(bucket.kind(), BucketKind::ObjectLambdaAccessPoint(_));
                    self.uses_virtual_host(bucket)?;
                    if accelerate {
                        return Err(self.unsupported("access points", "Transfer Acceleration"));
                    }
                    if object_lambda && dual_stack {
                        return Err(
                            self.unsupported("Object Lambda access points", "dual-stack endpoints")
                        );
                    }
                    self.check_arn_region(bucket, arn.region, arn.partition)?;
                    let service = if object_lambda {
                        "s3-object-lambda"
                    } else {
                        "s3"
                    };
                    signing = signing.in_region(arn.region, self).for_service(service);
                    host.push_str(arn.name);
                    host.push('-');
                    host.push_str(arn.account_id);
                    host.push('.');
                    self.push_access_point_host(&mut host, object_lambda, arn.region);
                }
                BucketKind::Directory { zone_id } => {
                    if dual_stack || accelerate {
                        let variant = if dual_stack {
                            "dual-stack endpoints"
                        } else {
                            "Transfer Acceleration"
                        };
                        return Err(
                            self.unsupported("S3 Express One Zone directory buckets", variant)
                        );
                    }
                    signing = signing.for_service("s3express");
                    match route {
                        Route::BucketControl | Route::DirectoryControl => {
                            self.push_directory_control_host(&mut host);
                            path_style_bucket = Some(bucket);
                        }
                        Route::Data => {
                            if !iam_auth {
                                signing = signing.with_session_of(bucket.as_str());
                            }
                            match self.provider {
                                Provider::Custom if is_ip_authority(&self.authority) => {
                                    host.push_str(&self.authority);
                                    path_style_bucket = Some(bucket);
                                }
                                Provider::Custom => {
                                    host.push_str(bucket.as_str());
                                    host.push('.');
                                    host.push_str(&self.authority);
                                }
                                Provider::Aws { fips, .. } => {
                                    host.push_str(bucket.as_str());
                                    host.push_str(if fips {
                                        ".s3express-fips-"
                                    } else {
                                        ".s3express-"
                                    });
                                    host.push_str(zone_id);
                                    host.push('.');
                                    host.push_str(&self.region);
                                    host.push('.');
                                    host.push_str(
                                        crate::partition::of_region(&self.region).dns_suffix,
                                    );
                                }
                            }
                        }
                    }
                }
                _ if accelerate && route == Route::Data => {
                    if self.style == AddressingStyle::Path {
                        return Err(
                            self.unsupported("path-style addressing", "Transfer Acceleration")
                        );
                    }
                    if !bucket.is_dns_compatible() || bucket.as_str().contains('.') {
                        return Err(InvalidInput::BucketName {
                            name: bucket.as_str().to_owned(),
                            reason: "cannot be used with Transfer Acceleration (its hosts take a \
                                     bucket name without '.' that is a DNS label)",
                        }
                        .into());
                    }
                    host.push_str(bucket.as_str());
                    host.push_str(".s3-accelerate");
                    if dual_stack {
                        host.push_str(".dualstack");
                    }
                    host.push('.');
                    host.push_str(crate::partition::of_region(&self.region).dns_suffix);
                }
                _ if self.uses_virtual_host(bucket)? => {
                    host.push_str(bucket.as_str());
                    host.push('.');
                    host.push_str(&self.authority);
                }
                _ => {
                    host.push_str(&self.authority);
                    path_style_bucket = Some(bucket);
                }
            },
        }
        if let Some(bucket) = path_style_bucket {
            path.push_str(bucket.as_str());
            if key.is_some() {
                path.push('/');
            }
        }
        if let Some(key) = key {
            crate::encoding::push_path_encoded(&mut path, key.as_str());
        }
        let mut uri = String::with_capacity(host.len() + path.len() + query.len() + 10);
        uri.push_str(self.scheme.as_str());
        uri.push_str("://");
        uri.push_str(&host);
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
        Ok(Address { uri, signing })
    }

    /// `<service>[-fips][.dualstack].<region>.<suffix>` after an access point's
    /// `<name>-<account>.`, or the custom endpoint's authority.
    fn push_access_point_host(&self, host: &mut String, object_lambda: bool, region: &str) {
        let Provider::Aws {
            fips, dual_stack, ..
        } = self.provider
        else {
            host.push_str(&self.authority);
            return;
        };
        host.push_str(if object_lambda {
            "s3-object-lambda"
        } else {
            "s3-accesspoint"
        });
        if fips {
            host.push_str("-fips");
        }
        if dual_stack {
            host.push_str(".dualstack");
        }
        host.push('.');
        host.push_str(region);
        host.push('.');
        host.push_str(crate::partition::of_region(region).dns_suffix);
    }

    /// `s3express-control[-fips].<region>.<suffix>`, or the custom endpoint's authority.
    fn push_directory_control_host(&self, host: &mut String) {
        match self.provider {
            Provider::Custom => host.push_str(&self.authority),
            Provider::Aws { fips, .. } => {
                host.push_str(if fips {
                    "s3express-control-fips."
                } else {
                    "s3express-control."
                });
                host.push_str(&self.region);
                host.push('.');
                host.push_str(crate::partition::of_region(&self.region).dns_suffix);
            }
        }
    }

    /// An access point ARN in `region` of `partition` can be reached from this endpoint:
    /// the same partition, and the same region unless `use_arn_region` allows another.
    fn check_arn_region(
        &self,
        bucket: &BucketName,
        region: &str,
        partition: &str,
    ) -> Result<(), Error> {
        let own = crate::partition::of_region(&self.region);
        let reason = if own.name != partition {
            format!(
                "the client is configured for region {} (partition {}), but the ARN {bucket} is \
                 in partition {partition}",
                self.region, own.name
            )
        } else if region != self.region && !self.use_arn_region {
            format!(
                "the ARN {bucket} is in region {region}, the client in {}, and use_arn_region is \
                 off: turn it on (ClientBuilder::use_arn_region, AWS_S3_USE_ARN_REGION) or use a \
                 client for {region}",
                self.region
            )
        } else {
            return Ok(());
        };
        Err(InvalidInput::Endpoint { reason }.into())
    }

    fn unsupported(&self, what: &str, variant: &str) -> Error {
        InvalidInput::Endpoint {
            reason: format!("{what} cannot be used with {variant}"),
        }
        .into()
    }

    /// Whether a Multi-Region Access Point can be reached from this endpoint: AWS serves
    /// them from one global host (HTTPS, virtual-hosted) in the `aws` partition, with no
    /// dual-stack or FIPS variant and nothing for custom endpoints to route to.
    fn check_multi_region_access_point(&self) -> Result<(), Error> {
        let reason = match self.provider {
            Provider::Custom => {
                "Multi-Region Access Points are only reachable through AWS endpoints \
                 (Endpoint::aws), not a custom endpoint"
            }
            Provider::Aws {
                dual_stack: true, ..
            } => "Multi-Region Access Points have no dual-stack endpoint",
            Provider::Aws { fips: true, .. } => "Multi-Region Access Points have no FIPS endpoint",
            Provider::Aws { .. } if self.style == AddressingStyle::Path => {
                "Multi-Region Access Points cannot be addressed path-style"
            }
            Provider::Aws { .. } if crate::partition::of_region(&self.region).name != "aws" => {
                "Multi-Region Access Points exist only in the aws partition, not in this \
                 region's"
            }
            Provider::Aws { .. } => return Ok(()),
        };
        Err(InvalidInput::Endpoint {
            reason: format!("{:?} (region {}): {reason}", self.authority, self.region),
        }
        .into())
    }

    fn refresh_aws_host(&mut self) {
        if let Provider::Aws {
            dual_stack, fips, ..
        } = self.provider
        {
            let service = if fips { "s3-fips" } else { "s3" };
            let dual = if dual_stack { ".dualstack" } else { "" };
            let suffix = crate::partition::of_region(&self.region).dns_suffix;
            self.authority = format!("{service}{dual}.{}.{suffix}", self.region);
        }
    }
}

/// The host of a Multi-Region Access Point is `<alias>` (which ends in `.mrap`) followed by this.
const MRAP_HOST_SUFFIX: &str = ".accesspoint.s3-global.amazonaws.com";

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

fn validate_region(region: &str) -> Result<(), Error> {
    let valid = !region.is_empty()
        && region.len() <= 63
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(InvalidInput::Endpoint {
            reason: format!("region {region:?} must be lowercase letters, digits and '-'"),
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
        assert!(virtual_hosted.uri(Some(&legacy), None, "").is_err());
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
                "not a custom endpoint",
            ),
            (
                Endpoint::custom("http://127.0.0.1:9000", "us-east-1")
                    .unwrap()
                    .with_addressing_style(AddressingStyle::VirtualHosted),
                "not a custom endpoint",
            ),
            (aws.clone().with_dual_stack(true), "no dual-stack endpoint"),
            (aws.clone().with_fips(true), "no FIPS endpoint"),
            (
                aws.clone().with_dual_stack(true).with_fips(true),
                "no dual-stack endpoint",
            ),
            (
                aws.clone().with_addressing_style(AddressingStyle::Path),
                "path-style",
            ),
            (Endpoint::aws("cn-north-1").unwrap(), "aws partition"),
            (Endpoint::aws("us-gov-west-1").unwrap(), "aws partition"),
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
