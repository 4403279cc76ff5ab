//! Provider profiles: what each S3-compatible store is documented (or, for the test servers,
//! observed) to accept, as data, and the pure adaptations of a request that follow from it.
//!
//! A [`Provider`] names a store; [`Provider::quirks`] gives its [`ProviderQuirks`]. A
//! transport detects the provider from the endpoint host ([`Provider::detect`]) unless one is
//! chosen explicitly, and then *adapts* instead of failing: it sends no checksum algorithm the
//! store rejects ([`ProviderQuirks::upload_checksum`], [`ProviderQuirks::multipart_checksum`]),
//! no `encoding-type=url` where listings do not honour it, no aws-chunked trailer where the
//! store takes none ([`ProviderQuirks::adapt_request`]), and refuses early, with a typed
//! [`Unsupported`] error, what the store would silently get wrong (a conditional write it
//! ignores, a presigned URL it would not honour for that long).
//!
//! Where a store's documentation says nothing about a feature, its profile assumes the
//! feature is missing: a checksum the store might refuse is not sent, a condition it might
//! ignore is refused. `docs/compatibility.md` lists every value with its source. A profile
//! is a plain value: copy it and change a field to describe a store (or a store version)
//! better than the built-in table does.
//!
//! ```
//! use s3_ops::{ChecksumAlgorithm, Endpoint, Provider};
//!
//! let r2 = Endpoint::custom("https://0123abcd.r2.cloudflarestorage.com", "auto")?;
//! assert_eq!(Provider::detect(&r2), Provider::CloudflareR2);
//! let quirks = Provider::CloudflareR2.quirks();
//! // R2 takes CRC32 only as a composite multipart checksum, CRC64NVME only as a full-object
//! // one: a managed upload that wants a full-object CRC gets CRC64NVME.
//! let full_object_for_crcs = |algorithm: ChecksumAlgorithm| match algorithm {
//!     ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256 => s3_ops::ChecksumType::Composite,
//!     _ => s3_ops::ChecksumType::FullObject,
//! };
//! assert_eq!(
//!     quirks.multipart_checksum(Some(ChecksumAlgorithm::Crc32), full_object_for_crcs),
//!     Some(ChecksumAlgorithm::Crc64Nvme)
//! );
//! assert_eq!(quirks.default_region("0123abcd.r2.cloudflarestorage.com").as_deref(), Some("auto"));
//! # Ok::<(), s3_ops::Error>(())
//! ```

use std::fmt;
use std::time::Duration;

use http::{HeaderValue, Method, Uri};

use crate::checksum::{ChecksumAlgorithm, ChecksumType};
use crate::endpoint::{AddressingStyle, Endpoint};
use crate::error::{Error, InvalidInput};
use crate::request::{Body, OperationRequest};

/// An S3-compatible store with a built-in profile ([`Provider::quirks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// Amazon S3.
    Aws,
    /// Amazon S3 Express One Zone directory buckets (`<name>--<zone>--x-s3`): the client
    /// applies this profile to every request to one, whatever the client's own.
    S3Express,
    /// MinIO (AIStor).
    Minio,
    /// Ceph Object Gateway (RADOS Gateway).
    CephRgw,
    /// Cloudflare R2.
    CloudflareR2,
    /// Google Cloud Storage through its XML API (S3 interoperability).
    GoogleCloudStorage,
    /// Backblaze B2 through its S3-compatible API.
    BackblazeB2,
    /// Wasabi.
    Wasabi,
    /// DigitalOcean Spaces.
    DigitalOceanSpaces,
    /// s3s-fs, the embedded test server of this workspace (`tools/local-s3`).
    S3sFs,
    /// moto in server mode.
    Moto,
    /// Garage (Deuxfleurs), a geo-distributed store.
    Garage,
    /// Any other store: the client behaves as it does for S3, adapting nothing.
    Generic,
}

impl Provider {
    /// Every provider.
    pub const ALL: [Provider; 13] = [
        Provider::Aws,
        Provider::S3Express,
        Provider::Minio,
        Provider::CephRgw,
        Provider::CloudflareR2,
        Provider::GoogleCloudStorage,
        Provider::BackblazeB2,
        Provider::Wasabi,
        Provider::DigitalOceanSpaces,
        Provider::S3sFs,
        Provider::Moto,
        Provider::Garage,
        Provider::Generic,
    ];

    /// The store's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Aws => "Amazon S3",
            Provider::S3Express => "Amazon S3 Express One Zone",
            Provider::Minio => "MinIO",
            Provider::CephRgw => "Ceph RGW",
            Provider::CloudflareR2 => "Cloudflare R2",
            Provider::GoogleCloudStorage => "Google Cloud Storage (XML API)",
            Provider::BackblazeB2 => "Backblaze B2",
            Provider::Wasabi => "Wasabi",
            Provider::DigitalOceanSpaces => "DigitalOcean Spaces",
            Provider::S3sFs => "s3s-fs",
            Provider::Moto => "moto",
            Provider::Garage => "Garage",
            Provider::Generic => "a generic S3-compatible store",
        }
    }

    /// The short name a configuration gives it (`aws`, `s3-express`, `minio`, `ceph`, `r2`,
    /// `gcs`, `b2`, `wasabi`, `spaces`, `s3s-fs`, `moto`, `garage`, `generic`): what
    /// [`Provider::from_id`] reads.
    pub fn id(self) -> &'static str {
        match self {
            Provider::Aws => "aws",
            Provider::S3Express => "s3-express",
            Provider::Minio => "minio",
            Provider::CephRgw => "ceph",
            Provider::CloudflareR2 => "r2",
            Provider::GoogleCloudStorage => "gcs",
            Provider::BackblazeB2 => "b2",
            Provider::Wasabi => "wasabi",
            Provider::DigitalOceanSpaces => "spaces",
            Provider::S3sFs => "s3s-fs",
            Provider::Moto => "moto",
            Provider::Garage => "garage",
            Provider::Generic => "generic",
        }
    }

    /// The provider of a short name ([`Provider::id`]), case-insensitive.
    pub fn from_id(id: &str) -> Option<Provider> {
        Provider::ALL
            .into_iter()
            .find(|provider| provider.id().eq_ignore_ascii_case(id.trim()))
    }

    /// The provider an endpoint belongs to: [`Provider::Aws`] for [`Endpoint::aws`], otherwise
    /// by its host ([`Provider::from_host`]).
    pub fn detect(endpoint: &Endpoint) -> Provider {
        if endpoint.is_aws() {
            Provider::Aws
        } else {
            Provider::from_host(endpoint.host())
        }
    }

    /// The provider whose public endpoints have this host name (a port is ignored), or
    /// [`Provider::Generic`]. MinIO, Ceph RGW, Garage, s3s-fs and moto run under any name
    /// and are never detected: choose them explicitly.
    pub fn from_host(host: &str) -> Provider {
        let host = strip_port(host).trim_end_matches('.').to_ascii_lowercase();
        let under = |domain: &str| {
            host == domain
                || host
                    .strip_suffix(domain)
                    .is_some_and(|rest| rest.ends_with('.'))
        };
        if under("amazonaws.com") || under("amazonaws.com.cn") {
            Provider::Aws
        } else if under("r2.cloudflarestorage.com") {
            Provider::CloudflareR2
        } else if host == "storage.googleapis.com" || under("storage.googleapis.com") {
            Provider::GoogleCloudStorage
        } else if under("backblazeb2.com") {
            Provider::BackblazeB2
        } else if under("wasabisys.com") {
            Provider::Wasabi
        } else if under("digitaloceanspaces.com") {
            Provider::DigitalOceanSpaces
        } else {
            Provider::Generic
        }
    }

    /// The store's profile.
    pub fn quirks(self) -> ProviderQuirks {
        use ChecksumAlgorithm::{Crc32, Crc32c, Crc64Nvme, Sha1, Sha256};
        const ALL_ALGORITHMS: &[ChecksumAlgorithm] = &[Crc32, Crc32c, Crc64Nvme, Sha1, Sha256];
        const NONE: &[ChecksumAlgorithm] = &[];
        const MIB: u64 = 1024 * 1024;
        const GIB: u64 = 1024 * MIB;
        const TIB: u64 = 1024 * GIB;
        const WEEK: Duration = Duration::from_secs(7 * 24 * 3600);
        // Amazon S3 as documented; the other profiles say where they differ.
        let s3 = ProviderQuirks {
            provider: self,
            addressing: AddressingStyle::Auto,
            checksums: ALL_ALGORITHMS,
            full_object_checksums: &[Crc32, Crc32c, Crc64Nvme],
            composite_checksums: &[Crc32, Crc32c, Sha1, Sha256],
            aws_chunked: true,
            trailing_checksums: true,
            signed_trailers: true,
            list_multipart_uploads: true,
            listing_url_encoding: true,
            list_objects_v2: true,
            listings_in_key_order: true,
            conditional_writes: ConditionalWrites::ALL,
            min_part_size: 5 * MIB,
            max_part_size: 5 * GIB,
            max_parts: 10_000,
            max_object_size: 5 * TIB,
            max_presign_expiry: WEEK,
            region: RegionNaming::Any,
        };
        // A store whose documentation is silent on integrity and conditions: nothing it
        // might refuse or ignore is relied on.
        let undocumented = ProviderQuirks {
            addressing: AddressingStyle::Path,
            checksums: NONE,
            full_object_checksums: NONE,
            composite_checksums: NONE,
            aws_chunked: false,
            trailing_checksums: false,
            signed_trailers: false,
            listing_url_encoding: false,
            conditional_writes: ConditionalWrites::NONE,
            ..s3
        };
        match self {
            Provider::Aws => ProviderQuirks {
                region: RegionNaming::Aws,
                ..s3
            },
            // "Differences for directory buckets" and its checksum guidance: CRC32, CRC32C,
            // SHA-1 and SHA-256 (no MD5, which s3-ops already leaves out for these buckets);
            // full-object checksums are CRCs.
            Provider::S3Express => ProviderQuirks {
                region: RegionNaming::Aws,
                checksums: &[Crc32, Crc32c, Sha1, Sha256],
                full_object_checksums: &[Crc32, Crc32c],
                composite_checksums: &[Crc32, Crc32c, Sha1, Sha256],
                listings_in_key_order: false,
                ..s3
            },
            Provider::Generic => s3,
            Provider::Minio => ProviderQuirks {
                conditional_writes: ConditionalWrites {
                    put_if_none_match: true,
                    put_if_match: true,
                    copy_if_none_match: true,
                },
                max_object_size: 50 * TIB,
                ..undocumented
            },
            Provider::CephRgw => undocumented,
            Provider::CloudflareR2 => ProviderQuirks {
                addressing: AddressingStyle::Auto,
                // PutObject and CompleteMultipartUpload take `If-Match` / `If-None-Match`;
                // CopyObject's destination conditions are `cf-copy-destination-*` headers
                // instead (R2's "Conditional operations" page).
                conditional_writes: ConditionalWrites {
                    put_if_none_match: true,
                    put_if_match: true,
                    copy_if_none_match: false,
                },
                checksums: ALL_ALGORITHMS,
                full_object_checksums: &[Crc64Nvme],
                composite_checksums: &[Crc32, Crc32c, Sha1, Sha256],
                max_part_size: 5 * GIB - 5 * MIB,
                max_object_size: 5 * TIB - 5 * GIB,
                region: RegionNaming::Fixed("auto"),
                ..undocumented
            },
            Provider::GoogleCloudStorage => ProviderQuirks {
                addressing: AddressingStyle::Auto,
                // `x-amz-decoded-content-length` is among the XML API's request headers.
                aws_chunked: true,
                listing_url_encoding: true,
                ..undocumented
            },
            Provider::BackblazeB2 => ProviderQuirks {
                region: RegionNaming::FromHost,
                ..undocumented
            },
            Provider::Wasabi => undocumented,
            Provider::DigitalOceanSpaces => ProviderQuirks {
                addressing: AddressingStyle::Auto,
                ..undocumented
            },
            // Observed (the two-server suite, docs/compatibility.md): single-request checksums are
            // verified, multipart objects get none; listings echo `EncodingType=url` but send
            // keys unencoded; CopyObject ignores the destination's `If-None-Match`.
            Provider::S3sFs => ProviderQuirks {
                addressing: AddressingStyle::Path,
                list_multipart_uploads: false,
                full_object_checksums: NONE,
                composite_checksums: NONE,
                listing_url_encoding: false,
                conditional_writes: ConditionalWrites {
                    put_if_none_match: true,
                    put_if_match: true,
                    copy_if_none_match: false,
                },
                ..s3
            },
            // Observed: checksums are stored, not verified; CRC32C silently becomes CRC32
            // without the `crc32c` package, and CRC64NVME was not seen; composite multipart
            // checksums only; CopyObject ignores the destination's `If-None-Match`, and
            // PutObject's conditions are evaluated but CompleteMultipartUpload's were not
            // observed, and one switch covers both.
            // Garage's S3 compatibility table (reference manual): path-style (vhost-style
            // only with a configured root domain), presigned URLs up to a week, no
            // versioning, ACLs, policies or Object Lock (501). Its source (v2.0.0,
            // `signature/checksum.rs`, `s3/multipart.rs`) takes the five checksums, full-object
            // CRCs and composite CRC32/CRC32C/SHA-1/SHA-256 as S3 does, and evaluates
            // `If-None-Match` / `If-Match` on reads only. Observed on 2.5.0: signed trailers
            // are refused (`400 InvalidRequest: Invalid payload signature`), unsigned ones
            // and checksum headers taken.
            Provider::Garage => ProviderQuirks {
                addressing: AddressingStyle::Path,
                signed_trailers: false,
                conditional_writes: ConditionalWrites::NONE,
                ..s3
            },
            Provider::Moto => ProviderQuirks {
                addressing: AddressingStyle::Path,
                checksums: &[Crc32, Sha1, Sha256],
                full_object_checksums: NONE,
                composite_checksums: &[Crc32, Sha1, Sha256],
                conditional_writes: ConditionalWrites::NONE,
                ..s3
            },
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which conditional writes a store evaluates (rather than ignores, storing the object
/// unconditionally).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ConditionalWrites {
    /// `If-None-Match: *` on PutObject and CompleteMultipartUpload (create only).
    pub put_if_none_match: bool,
    /// `If-Match: <etag>` on PutObject and CompleteMultipartUpload (overwrite only that).
    pub put_if_match: bool,
    /// `If-None-Match: *` for CopyObject's destination.
    pub copy_if_none_match: bool,
}

impl ConditionalWrites {
    /// Every condition is evaluated.
    pub const ALL: Self = Self {
        put_if_none_match: true,
        put_if_match: true,
        copy_if_none_match: true,
    };
    /// None is known to be evaluated.
    pub const NONE: Self = Self {
        put_if_none_match: false,
        put_if_match: false,
        copy_if_none_match: false,
    };
}

/// How a store names the region requests are signed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RegionNaming {
    /// AWS regions (`us-east-1`, `eu-west-1`, ...), part of the endpoint.
    Aws,
    /// One name for every bucket (Cloudflare R2: `auto`).
    Fixed(&'static str),
    /// The region in the endpoint host, `s3.<region>.<domain>` (Backblaze B2).
    FromHost,
    /// Whatever the store is configured with; the client's default when none is given.
    Any,
}

/// What a store accepts, as data. See the module docs; every field is public so that a
/// profile can be corrected for a store version (start from [`Provider::quirks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ProviderQuirks {
    /// The store this describes.
    pub provider: Provider,
    /// The addressing style used when the client leaves it automatic:
    /// [`AddressingStyle::Path`] for stores that serve buckets only in the path (by default).
    pub addressing: AddressingStyle,
    /// Checksum algorithms accepted on single requests (PutObject, UploadPart, CopyObject,
    /// CreateMultipartUpload). Empty: none is sent.
    pub checksums: &'static [ChecksumAlgorithm],
    /// Algorithms accepted as `FULL_OBJECT` multipart checksums.
    pub full_object_checksums: &'static [ChecksumAlgorithm],
    /// Algorithms accepted as `COMPOSITE` multipart checksums.
    pub composite_checksums: &'static [ChecksumAlgorithm],
    /// Whether the store takes aws-chunked bodies (`Content-Encoding: aws-chunked`, signed
    /// chunks), which a stream of unknown digest needs over plain HTTP.
    pub aws_chunked: bool,
    /// Whether the store takes a checksum as an aws-chunked trailer (`x-amz-trailer`). A
    /// transport that can read a body twice sends the checksum in a header instead (s3-wire
    /// does for files).
    pub trailing_checksums: bool,
    /// Whether the store verifies *signed* trailers
    /// (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`), the one encoding the client still sends
    /// them in: a one-shot stream with a checksum over plain HTTP (a replayable body is
    /// hashed ahead and its checksum sent in a header). Where it is `false` such a stream goes
    /// in signed chunks without its checksum trailer. Garage 2.5.0 refuses signed trailers
    /// (it signs them with the wrong string-to-sign); signed trailers are the least supported
    /// SigV4 mode among S3-compatible stores.
    pub signed_trailers: bool,
    /// Whether the store lists open multipart uploads (ListMultipartUploads): what finds an
    /// upload that a lost CreateMultipartUpload answer created, and the uploads a crashed
    /// process left, to abort them. Where it does not, only a lifecycle rule
    /// (AbortIncompleteMultipartUpload) removes them. Every documented store does; s3s-fs
    /// does not.
    pub list_multipart_uploads: bool,
    /// Whether listings honour `encoding-type=url` (keys sent URL-encoded).
    pub listing_url_encoding: bool,
    /// Whether the store serves ListObjectsV2 (`list-type=2`). Where it does not, the same
    /// listing is asked with ListObjects (version 1), which every store serves
    /// ([`ListObjectsV2::as_version_1`](crate::ListObjectsV2::as_version_1)); a
    /// ListObjectsV2 request itself is refused before sending ([`Feature::ListObjectsV2`]).
    /// The built-in profiles all say `true` (rclone's table lists Ceph, IBM COS, Huawei OBS
    /// and China Mobile EOS with version 1: set `false` for such a store); a store that
    /// ignores `list-type=2` is caught anyway
    /// ([`MalformedResponse::ListedAsVersion1`](crate::MalformedResponse::ListedAsVersion1)),
    /// and s3-wire's client then switches to version 1 by itself.
    pub list_objects_v2: bool,
    /// Whether listings come in key order (UTF-8 binary order, as S3's general purpose
    /// buckets list). S3 Express One Zone's directory buckets do not ("Differences for
    /// directory buckets"): a client that merges two listings, as a sync does, must sort such
    /// a listing whole first.
    pub listings_in_key_order: bool,
    /// Which conditional writes the store evaluates.
    pub conditional_writes: ConditionalWrites,
    /// The smallest part but the last, in bytes.
    pub min_part_size: u64,
    /// The largest part, in bytes.
    pub max_part_size: u64,
    /// The most parts of one upload.
    pub max_parts: u32,
    /// The largest object, in bytes.
    pub max_object_size: u64,
    /// The longest validity of a presigned URL.
    pub max_presign_expiry: Duration,
    /// How the signing region is named.
    pub region: RegionNaming,
}

/// The order a fallback checksum is picked in: cheapest first (`docs/integrity.md`).
const FALLBACK_ORDER: [ChecksumAlgorithm; 5] = [
    ChecksumAlgorithm::Crc32,
    ChecksumAlgorithm::Crc32c,
    ChecksumAlgorithm::Crc64Nvme,
    ChecksumAlgorithm::Sha256,
    ChecksumAlgorithm::Sha1,
];

impl ProviderQuirks {
    /// The checksum a single request (PutObject, UploadPart, CopyObject,
    /// CreateMultipartUpload) carries when `requested` is wanted: `requested` if the store
    /// accepts it, otherwise the cheapest algorithm it accepts, otherwise none. `None` stays
    /// `None`.
    pub fn upload_checksum(
        &self,
        requested: Option<ChecksumAlgorithm>,
    ) -> Option<ChecksumAlgorithm> {
        let requested = requested?;
        if self.checksums.contains(&requested) {
            return Some(requested);
        }
        FALLBACK_ORDER
            .into_iter()
            .find(|algorithm| self.checksums.contains(algorithm))
    }

    /// The checksum of a multipart upload that would use `requested` with the checksum type
    /// `type_of` gives each algorithm (the managed uploads of s3-wire-tokio: full-object for
    /// the CRCs, composite for the hashes): `requested` if the store accepts that
    /// combination, otherwise the cheapest algorithm whose combination it accepts, otherwise
    /// none.
    pub fn multipart_checksum(
        &self,
        requested: Option<ChecksumAlgorithm>,
        type_of: impl Fn(ChecksumAlgorithm) -> ChecksumType,
    ) -> Option<ChecksumAlgorithm> {
        let requested = requested?;
        let accepted = |algorithm: ChecksumAlgorithm| {
            self.checksums.contains(&algorithm)
                && self.accepts_multipart(algorithm, type_of(algorithm))
        };
        if accepted(requested) {
            return Some(requested);
        }
        FALLBACK_ORDER
            .into_iter()
            .find(|algorithm| accepted(*algorithm))
    }

    /// Whether the store takes `algorithm` as a multipart checksum of `checksum_type`.
    pub fn accepts_multipart(
        &self,
        algorithm: ChecksumAlgorithm,
        checksum_type: ChecksumType,
    ) -> bool {
        match checksum_type {
            ChecksumType::FullObject => self.full_object_checksums.contains(&algorithm),
            ChecksumType::Composite => self.composite_checksums.contains(&algorithm),
        }
    }

    /// The signing region to use for an endpoint with this `host` when none was configured:
    /// R2's `auto`, B2's `<region>` from `s3.<region>.backblazeb2.com`; `None` where the
    /// client's default applies.
    pub fn default_region(&self, host: &str) -> Option<String> {
        match self.region {
            RegionNaming::Fixed(name) => Some(name.to_owned()),
            RegionNaming::FromHost => {
                let host = strip_port(host);
                let mut labels = host.split('.');
                match (labels.next(), labels.next()) {
                    (Some("s3"), Some(region)) if !region.is_empty() && labels.next().is_some() => {
                        Some(region.to_ascii_lowercase())
                    }
                    _ => None,
                }
            }
            RegionNaming::Aws | RegionNaming::Any => None,
        }
    }

    /// Refuses a presigned URL valid for longer than the store honours (it would stop
    /// working before the time its holder was promised).
    pub fn check_presign_expiry(&self, expires_in: Duration) -> Result<(), Error> {
        if expires_in <= self.max_presign_expiry {
            Ok(())
        } else {
            Err(self.unsupported(Feature::PresignExpiry {
                requested: expires_in,
                maximum: self.max_presign_expiry,
            }))
        }
    }

    /// Refuses a stream that would have to be sent aws-chunked (signed chunks over plain
    /// HTTP) to a store that takes no aws-chunked bodies.
    pub fn check_aws_chunked(&self) -> Result<(), Error> {
        if self.aws_chunked {
            Ok(())
        } else {
            Err(self.unsupported(Feature::AwsChunked))
        }
    }

    /// Refuses to look for open multipart uploads where the store cannot list them.
    pub fn check_list_multipart_uploads(&self) -> Result<(), Error> {
        if self.list_multipart_uploads {
            Ok(())
        } else {
            Err(self.unsupported(Feature::ListMultipartUploads))
        }
    }

    /// The error that says this store does not support `feature` (for a transport that
    /// finds out at run time, e.g. from a `501 NotImplemented`).
    pub fn unsupported_error(&self, feature: Feature) -> Error {
        self.unsupported(feature)
    }

    /// Refuses a create-only write (`If-None-Match: *`: a managed upload's `create_only`)
    /// where the store would store the object unconditionally.
    pub fn check_create_only(&self, copy: bool) -> Result<(), Error> {
        let evaluated = if copy {
            self.conditional_writes.copy_if_none_match
        } else {
            self.conditional_writes.put_if_none_match
        };
        if evaluated {
            Ok(())
        } else {
            Err(self.unsupported(Feature::ConditionalWrite {
                header: "If-None-Match",
                copy,
            }))
        }
    }

    /// Adapts an encoded request to the store, before it is signed:
    ///
    /// - a conditional write (`If-None-Match` / `If-Match` on PutObject, CopyObject or
    ///   CompleteMultipartUpload) the store would ignore is refused ([`Unsupported`]);
    /// - a ListObjectsV2 request to a store that serves only ListObjects (version 1) is
    ///   refused ([`Feature::ListObjectsV2`]);
    /// - `encoding-type=url` is dropped from a listing whose store does not honour it;
    /// - a checksum the store does not accept is replaced by [`ProviderQuirks::upload_checksum`]'s
    ///   choice (recomputed over an in-memory body; a streamed body's trailer switches
    ///   algorithm), or removed when the store accepts none;
    /// - an aws-chunked trailer the store cannot take is removed (a streamed body then goes
    ///   without checksum: computing one in a header would need the body read twice).
    ///
    /// The same mapping is applied to CreateMultipartUpload's `x-amz-checksum-algorithm` and
    /// to each UploadPart, so the parts of an adapted upload still match it; its checksum
    /// type is the caller's.
    pub fn adapt_request(&self, request: &mut OperationRequest) -> Result<(), Error> {
        self.check_conditions(request)?;
        self.check_list_objects_v2(request)?;
        if !self.listing_url_encoding && request.request.method() == Method::GET {
            drop_query_pair(request, "encoding-type", "url")?;
        }
        self.adapt_checksums(request);
        Ok(())
    }

    fn check_list_objects_v2(&self, request: &OperationRequest) -> Result<(), Error> {
        let lists_v2 = request.request.method() == Method::GET
            && request
                .request
                .uri()
                .query()
                .is_some_and(|query| query.split('&').any(|pair| pair == "list-type=2"));
        if lists_v2 && !self.list_objects_v2 {
            return Err(self.unsupported(Feature::ListObjectsV2));
        }
        Ok(())
    }

    fn check_conditions(&self, request: &OperationRequest) -> Result<(), Error> {
        let method = request.request.method();
        let headers = request.request.headers();
        let completes_upload =
            method == Method::POST
                && request.request.uri().query().is_some_and(|query| {
                    query.split('&').any(|pair| pair.starts_with("uploadId="))
                });
        if method != Method::PUT && !completes_upload {
            return Ok(());
        }
        let copy = headers.contains_key("x-amz-copy-source");
        let conditions = self.conditional_writes;
        let refused = if copy {
            // UploadPartCopy has no destination conditions; CopyObject's `If-None-Match`.
            (headers.contains_key("if-none-match") && !conditions.copy_if_none_match)
                .then_some("If-None-Match")
        } else if headers.contains_key("if-none-match") && !conditions.put_if_none_match {
            Some("If-None-Match")
        } else if headers.contains_key("if-match") && !conditions.put_if_match {
            Some("If-Match")
        } else {
            None
        };
        match refused {
            Some(header) => Err(self.unsupported(Feature::ConditionalWrite { header, copy })),
            None => Ok(()),
        }
    }

    fn adapt_checksums(&self, request: &mut OperationRequest) {
        let headers = request.request.headers();
        let sent_values = || {
            ChecksumAlgorithm::ALL
                .into_iter()
                .filter(|algorithm| headers.contains_key(algorithm.header_name()))
        };
        let announced = headers
            .get("x-amz-checksum-algorithm")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<ChecksumAlgorithm>().ok());
        let trailer = match request.body {
            Body::External {
                trailing_checksum, ..
            } => trailing_checksum,
            _ => None,
        };
        let accepted = |algorithm: &ChecksumAlgorithm| self.checksums.contains(algorithm);
        // Checked without allocating: this runs before every attempt of every request.
        let needs_change = !sent_values().all(|algorithm| accepted(&algorithm))
            || !announced.iter().all(accepted)
            || trailer.is_some_and(|algorithm| !self.trailing_checksums || !accepted(&algorithm));
        if !needs_change {
            return;
        }
        let sent_values: Vec<ChecksumAlgorithm> = sent_values().collect();
        let in_memory = match &request.body {
            Body::Bytes(bytes) => Some(bytes.clone()),
            Body::Empty => Some(bytes::Bytes::new()),
            _ => None,
        };
        let headers = request.request.headers_mut();
        // The value headers: recomputed with the accepted algorithm where the bytes are here.
        for algorithm in sent_values {
            if self.checksums.contains(&algorithm) {
                continue;
            }
            headers.remove(algorithm.header_name());
            headers.remove("x-amz-sdk-checksum-algorithm");
            if let (Some(replacement), Some(bytes)) =
                (self.upload_checksum(Some(algorithm)), in_memory.as_ref())
            {
                let checksum = replacement.checksum(bytes);
                if let Ok(value) = HeaderValue::from_str(&checksum.to_base64()) {
                    headers.insert(replacement.header_name(), value);
                    headers.insert(
                        "x-amz-sdk-checksum-algorithm",
                        HeaderValue::from_static(replacement.as_str()),
                    );
                }
            }
        }
        // CreateMultipartUpload's and CopyObject's algorithm (the store computes the value).
        if let Some(algorithm) = announced.filter(|a| !self.checksums.contains(a)) {
            match self.upload_checksum(Some(algorithm)) {
                Some(replacement) => {
                    headers.insert(
                        "x-amz-checksum-algorithm",
                        HeaderValue::from_static(replacement.as_str()),
                    );
                }
                None => {
                    headers.remove("x-amz-checksum-algorithm");
                    headers.remove("x-amz-checksum-type");
                }
            }
        }
        // A streamed body's trailer.
        if let Body::External {
            trailing_checksum: trailing @ Some(_),
            ..
        } = &mut request.body
        {
            let replacement = if self.trailing_checksums {
                self.upload_checksum(*trailing)
            } else {
                None
            };
            *trailing = replacement;
            match replacement {
                Some(algorithm) => {
                    headers.insert(
                        "x-amz-sdk-checksum-algorithm",
                        HeaderValue::from_static(algorithm.as_str()),
                    );
                }
                None => {
                    headers.remove("x-amz-sdk-checksum-algorithm");
                }
            }
        }
    }

    fn unsupported(&self, feature: Feature) -> Error {
        InvalidInput::Unsupported(Unsupported {
            provider: self.provider,
            feature,
        })
        .into()
    }
}

/// Removes `name=value` from the request's (already encoded, sorted) query.
fn drop_query_pair(request: &mut OperationRequest, name: &str, value: &str) -> Result<(), Error> {
    let uri = request.request.uri();
    let Some(query) = uri.query() else {
        return Ok(());
    };
    let pair = format!("{name}={value}");
    if !query.split('&').any(|p| p == pair) {
        return Ok(());
    }
    let kept: Vec<&str> = query.split('&').filter(|p| *p != pair).collect();
    let path = uri.path();
    let path_and_query = if kept.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", kept.join("&"))
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().map_err(|e| {
        Error::from(InvalidInput::Endpoint {
            reason: format!("cannot rebuild request URI: {e}"),
        })
    })?);
    *request.request.uri_mut() = Uri::from_parts(parts).map_err(|e| {
        Error::from(InvalidInput::Endpoint {
            reason: format!("cannot rebuild request URI: {e}"),
        })
    })?;
    Ok(())
}

/// `host` without a `:port` (IPv6 literals keep their brackets).
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_once(']').map_or(host, |(address, _)| address);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// A request the profile of its store says would be mishandled, refused before anything is
/// sent ([`InvalidInput::Unsupported`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unsupported {
    /// The store.
    pub provider: Provider,
    /// What it does not support.
    pub feature: Feature,
}

/// What a store does not support (see [`Unsupported`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Feature {
    /// A conditional write the store would ignore, storing the object unconditionally.
    ConditionalWrite {
        /// `If-None-Match` or `If-Match`.
        header: &'static str,
        /// Whether it was CopyObject's destination condition.
        copy: bool,
    },
    /// A presigned URL valid for longer than the store honours.
    PresignExpiry {
        /// The validity asked for.
        requested: Duration,
        /// The store's limit.
        maximum: Duration,
    },
    /// An aws-chunked body (a stream over plain HTTP without a known digest).
    AwsChunked,
    /// Listing open multipart uploads (ListMultipartUploads).
    ListMultipartUploads,
    /// A ListObjectsV2 request (the store serves ListObjects version 1 only).
    ListObjectsV2,
    /// A signed aws-chunked checksum trailer (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`),
    /// which the store refused.
    SignedTrailer,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let provider = self.provider;
        match &self.feature {
            Feature::ConditionalWrite { header, copy } => write!(
                f,
                "{provider} is not known to evaluate `{header}` on {} (it would write \
                 unconditionally), so the conditional write was refused; write without the \
                 condition, or correct the provider profile if this store version evaluates it",
                if *copy { "CopyObject" } else { "writes" }
            ),
            Feature::PresignExpiry { requested, maximum } => write!(
                f,
                "{provider} honours presigned URLs for at most {} s; {} s were asked for",
                maximum.as_secs(),
                requested.as_secs()
            ),
            Feature::ListObjectsV2 => write!(
                f,
                "{provider} does not serve ListObjectsV2 (its profile says list_objects_v2: \
                 false); list with ListObjects, version 1 (ListObjectsV2::as_version_1; \
                 s3-wire's Client::list_objects_v2 switches by itself)"
            ),
            Feature::SignedTrailer => write!(
                f,
                "{provider} refused the signed checksum trailer of a one-shot stream (Garage \
                 2.5.0 does; its profile says signed_trailers: false); the client sends such \
                 streams in signed chunks without the trailer from now on: send the body again"
            ),
            Feature::AwsChunked => write!(
                f,
                "{provider} is not known to accept aws-chunked bodies, which a one-shot stream \
                 needs over plain HTTP; use HTTPS, a file or in-memory body, or a checksum"
            ),
            Feature::ListMultipartUploads => write!(
                f,
                "{provider} cannot list multipart uploads (ListMultipartUploads), so uploads \
                 left open cannot be found and aborted by the client; set a lifecycle rule \
                 (AbortIncompleteMultipartUpload) on the bucket to remove them"
            ),
        }
    }
}
