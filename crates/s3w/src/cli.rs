//! The command line: global flags, the commands and their arguments (clap). Help text,
//! shell completions and the man page all come from these definitions.

use clap::{Args, Parser, Subcommand, ValueEnum};
use s3_wire::ops::ChecksumAlgorithm;

use crate::acl::AclArgs;
use crate::bucket_config::{ConfigArgs, VersioningArgs};
use crate::object_lock::{LegalHoldArgs, ObjectLockArgs, ObjectLockConfigArgs, RetentionArgs};
use crate::presign_post::PostArgs;
use crate::report::*;
use crate::restore::RestoreArgs;
/// The heading the global options are listed under, after a command's own.
pub(crate) const GLOBAL: &str = "Global options";
/// The heading of the transfer tuning options.
pub(crate) const TUNING: &str = "Transfer tuning (global)";

const EXAMPLES: &str = "\
Examples:
  s3w ls s3://my-bucket/logs/ --recursive --summarize --human-readable
  s3w cp ./report.pdf s3://my-bucket/docs/            # → s3://my-bucket/docs/report.pdf
  s3w cp -r ./site s3://my-bucket/site/               # ./site/a/b.html → s3://my-bucket/site/a/b.html
  s3w cp -r s3://my-bucket/site ./site-copy           # the directory site/, never site2/…
  s3w sync ./photos s3://my-bucket/photos --delete --exclude '*.tmp'
  tar c dir | s3w cp - s3://my-bucket/dir.tar         # stdin; `s3w cp s3://b/k -` writes stdout
  s3w completions bash > /etc/bash_completion.d/s3w

Exit status: 0 success, 1 a failure (each one is reported), 2 a usage error or a local path
that does not exist, 130 interrupted by Ctrl-C (SIGINT), 143 by SIGTERM.";

/// `s3w`: copy, list, sync and stream objects of S3-compatible stores.
#[derive(Debug, Parser)]
#[command(name = "s3w", version, about, after_help = EXAMPLES, max_term_width = 100)]
pub(crate) struct Cli {
    /// The AWS profile to read from ~/.aws/config and ~/.aws/credentials.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub profile: Option<String>,
    /// The region to sign for.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub region: Option<String>,
    /// The endpoint URL (e.g. http://127.0.0.1:9000).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub endpoint_url: Option<String>,
    /// The store behind the endpoint, when it cannot be told from the host: its profile
    /// adapts what is sent (aws, s3-express, minio, ceph, r2, gcs, b2, wasabi, spaces,
    /// garage, s3s-fs, moto, generic).
    #[arg(long, global = true, value_name = "NAME", value_parser = parse_provider, help_heading = GLOBAL)]
    pub provider: Option<s3_wire::Provider>,
    /// List with ListObjects (version 1) instead of ListObjectsV2, for a store that serves
    /// only that (a store that refuses version 2 or answers it as version 1 is caught
    /// without it).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub list_objects_v1: bool,
    /// Send nothing signed and look up no credentials: for public buckets.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_sign_request: bool,
    /// `requester`: pay for the requests to a Requester Pays bucket (sent with every
    /// request; such a bucket refuses them with 403 otherwise).
    #[arg(long, global = true, value_name = "requester", help_heading = GLOBAL)]
    pub request_payer: Option<RequestPayer>,
    /// A PEM file of the certificate authorities to trust for TLS (a corporate CA), on top
    /// of the platform's; overrides AWS_CA_BUNDLE and the profile's ca_bundle.
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub ca_bundle: Option<std::path::PathBuf>,
    /// Dangerous: accept any TLS certificate, so anyone on the path can read and change
    /// the traffic. For a throwaway test rig; prefer --ca-bundle.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_verify_ssl: bool,
    /// One JSON object per line (each with a `type`), failures included.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(long, short, global = true, help_heading = GLOBAL)]
    pub quiet: bool,
    /// No progress output.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_progress: bool,
    /// Print each request's method, path, status, attempt and timing to stderr.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub debug: bool,
    /// How transfers are cut and how many run at once.
    #[command(flatten)]
    pub tuning: Tuning,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Who pays for requests to a Requester Pays bucket (the AWS CLI's only value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RequestPayer {
    /// The caller.
    Requester,
}

/// Transfer tuning, global to every command.
#[derive(Debug, Clone, Args)]
pub(crate) struct Tuning {
    /// Objects transferred at once (recursive commands).
    #[arg(long, global = true, default_value_t = 8, help_heading = TUNING)]
    pub concurrency: usize,
    /// Parts (or download ranges) in flight per object.
    #[arg(long, global = true, default_value_t = 8, help_heading = TUNING)]
    pub part_concurrency: usize,
    /// Part size of multipart uploads and copies, in bytes (suffixes K, M, G: binary).
    #[arg(long, global = true, value_parser = parse_size, help_heading = TUNING)]
    pub part_size: Option<u64>,
    /// Uploads and copies up to this size go in one request (PutObject, CopyObject), larger
    /// ones in parts (default 16M for uploads, 5G for copies; suffixes K, M, G).
    #[arg(long, global = true, value_parser = parse_size, help_heading = TUNING)]
    pub multipart_threshold: Option<u64>,
    /// Bytes per ranged GET of downloads (default 64M; suffixes K, M, G).
    #[arg(long, global = true, value_parser = parse_size, help_heading = TUNING)]
    pub range_size: Option<u64>,
    /// Memory the transfers may hold at once, in bytes (suffixes K, M, G).
    #[arg(long, global = true, value_parser = parse_size, help_heading = TUNING)]
    pub max_memory: Option<u64>,
    /// Bandwidth limit of all requests together, in bytes per second (suffixes K, M, G).
    #[arg(long, global = true, value_parser = parse_size, help_heading = TUNING)]
    pub bwlimit: Option<u64>,
    /// Do not sync each downloaded file to disk before counting it done: much faster for
    /// many small files, but a crash of the machine soon after may lose or truncate them.
    #[arg(long, global = true, help_heading = TUNING)]
    pub no_sync: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List buckets, or the prefixes and objects under s3://bucket/prefix.
    ///
    /// One level shows names relative to the prefix (`PRE dir/` for prefixes); --recursive
    /// shows full keys. Times are UTC (RFC 3339). Nothing found exits 1, as the AWS CLI.
    Ls {
        /// s3://bucket[/prefix]; none lists the buckets.
        path: Option<String>,
        /// Every object under the prefix, not one level.
        #[arg(long, short)]
        recursive: bool,
        /// Sizes in KiB, MiB, GiB.
        #[arg(long, short = 'H')]
        human_readable: bool,
        /// A total line: objects and bytes.
        #[arg(long)]
        summarize: bool,
        /// Every version and delete marker (ListObjectVersions).
        #[arg(long)]
        versions: bool,
    },
    /// Copy local→S3, S3→local or S3→S3; `-` is stdin or stdout.
    ///
    /// `cp ./a.txt s3://b/dir/` writes s3://b/dir/a.txt (a trailing `/` means "into").
    /// `cp -r ./site s3://b/site/` copies the files under ./site to keys under site/.
    /// `cp -r s3://b/data ./x` copies the directory data/ (never data2/… or data.txt).
    /// A large upload keeps a resume journal under ~/.cache/s3w: after Ctrl-C or a crash,
    /// the same command sends only the missing parts.
    Cp(CopyArgs),
    /// Move: copy, then delete each source once its copy succeeded.
    Mv(CopyArgs),
    /// Delete an object, or with --recursive every object under a directory.
    Rm {
        /// s3://bucket/key; with --recursive s3://bucket/dir (the directory `dir/`: never
        /// `dir2/…` or `dir.txt` beside it).
        path: String,
        /// Every object under the directory (DeleteObjects, 1,000 keys a request, as the
        /// listing arrives).
        #[arg(long, short)]
        recursive: bool,
        /// Print what would be deleted; delete nothing.
        #[arg(long)]
        dryrun: bool,
        /// Delete this version of the object for good (not recursive).
        #[arg(long, conflicts_with = "recursive")]
        version_id: Option<String>,
        /// Delete a version under a GOVERNANCE retention (needs
        /// s3:BypassGovernanceRetention).
        #[arg(long)]
        bypass_governance_retention: bool,
        /// Which keys (relative to the directory).
        #[command(flatten)]
        filters: FilterArgs,
    },
    /// Make a bucket.
    Mb {
        /// s3://bucket
        bucket: String,
        /// With Object Lock enabled (and so versioning): its objects can be given a
        /// retention and legal holds.
        #[arg(long)]
        object_lock_enabled_for_bucket: bool,
    },
    /// Remove a bucket.
    Rb {
        /// s3://bucket
        bucket: String,
        /// Delete every object first.
        #[arg(long)]
        force: bool,
    },
    /// Make a destination like its source: copy what is missing or differs.
    ///
    /// By default an entry is copied when it is missing, its size differs or the source is
    /// newer (as the AWS CLI). Uploads store the file's time as `mtime` metadata (as
    /// rclone) and downloads set it back, so a round trip syncs nothing.
    Sync {
        /// A local directory or s3://bucket/prefix.
        source: String,
        /// A local directory or s3://bucket/prefix.
        destination: String,
        /// Delete destination files/objects the source lacks (filters protect them).
        #[arg(long)]
        delete: bool,
        /// Print the plan; change nothing.
        #[arg(long)]
        dryrun: bool,
        /// Compare sizes only.
        #[arg(long, conflicts_with_all = ["exact_timestamps", "no_clobber"])]
        size_only: bool,
        /// Copy when the size or the modification time differs at all (a HEAD per object
        /// of equal size, for its `mtime` metadata).
        #[arg(long, conflicts_with = "no_clobber")]
        exact_timestamps: bool,
        /// Never overwrite: copy only what the destination lacks.
        #[arg(long)]
        no_clobber: bool,
        /// Which entries (relative paths).
        #[command(flatten)]
        filters: FilterArgs,
        /// Symbolic links.
        #[command(flatten)]
        links: LinkArgs,
        /// Object attributes of uploads. With `--checksum ALG`, files of equal size are
        /// compared by content (the object's stored ALG checksum) instead of times.
        #[command(flatten)]
        attrs: AttrArgs,
    },
    /// Total size and object count under s3://bucket/dir.
    Du {
        /// s3://bucket[/dir] (the directory `dir/`, not its siblings)
        path: String,
        /// Sizes in KiB, MiB, GiB.
        #[arg(long, short = 'H')]
        human_readable: bool,
    },
    /// List the multipart uploads in progress under s3://bucket/prefix.
    Uploads {
        /// s3://bucket[/prefix]
        path: String,
    },
    /// Abort multipart uploads under s3://bucket/prefix older than --older-than-hours.
    AbortStale {
        /// s3://bucket[/prefix]
        path: String,
        /// Hours since the upload was initiated.
        #[arg(long, default_value_t = 24)]
        older_than_hours: u64,
    },
    /// Stream an object to stdout.
    Cat {
        /// s3://bucket/key
        path: String,
        /// Bytes FIRST-LAST (inclusive), as in an HTTP Range.
        #[arg(long)]
        range: Option<String>,
        /// This version of the object.
        #[arg(long)]
        version_id: Option<String>,
    },
    /// Upload stdin (any length) to s3://bucket/key (the same as `cp - s3://bucket/key`).
    Put {
        /// s3://bucket/key
        path: String,
        /// Object attributes.
        #[command(flatten)]
        attrs: AttrArgs,
    },
    /// Show an object's head: size, type, ETag, checksums, parts, metadata.
    Stat {
        /// s3://bucket/key
        path: String,
        /// This version of the object.
        #[arg(long)]
        version_id: Option<String>,
    },
    /// Show an object's attributes (GetObjectAttributes): size, ETag, storage class,
    /// checksum, and each part of a multipart object with its size and checksum.
    Attributes {
        /// s3://bucket/key
        path: String,
        /// This version of the object.
        #[arg(long)]
        version_id: Option<String>,
    },
    /// A presigned URL.
    Presign {
        /// s3://bucket/key
        path: String,
        /// Seconds the URL stays valid.
        #[arg(long, default_value_t = 3600)]
        expires_in: u64,
        /// GET or PUT.
        #[arg(long, default_value = "GET")]
        method: String,
        /// A presigned POST (an upload form) instead.
        #[command(flatten)]
        post: PostArgs,
    },
    /// Show a bucket's versioning, or turn it on (--enable) or suspend it (--suspend).
    Versioning(VersioningArgs),
    /// A bucket's lifecycle rules: --get (default), --put FILE (S3's XML), --delete.
    Lifecycle(ConfigArgs),
    /// A bucket's policy: --get (default), --put FILE (JSON, sent verbatim), --delete.
    Policy(ConfigArgs),
    /// A bucket's CORS rules: --get (default), --put FILE (S3's XML), --delete.
    Cors(ConfigArgs),
    /// A bucket's default encryption: --get (default), --put FILE (S3's XML), --delete.
    Encryption(ConfigArgs),
    /// A bucket's (s3://b) or an object's (s3://b/k) tags: --get, --put FILE, --delete.
    Tagging(ConfigArgs),
    /// A bucket's public access block: --get (default), --put FILE (S3's XML), --delete.
    PublicAccessBlock(ConfigArgs),
    /// Show a bucket's Object Lock configuration, or set its default retention (--mode with
    /// --days / --years; --enable alone enables Object Lock with no default).
    ObjectLock(ObjectLockConfigArgs),
    /// Show an object's Object Lock retention, or set it (--mode, --until / --days).
    Retention(RetentionArgs),
    /// Show an object's legal hold, or put it --on / --off.
    LegalHold(LegalHoldArgs),
    /// Restore a temporary copy of an archived (GLACIER, DEEP_ARCHIVE) object.
    Restore(RestoreArgs),
    /// Show a bucket's or an object's ACL, or replace it (--canned, --grant, --put FILE).
    Acl(AclArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `s3w man > /usr/local/share/man/man1/s3w.1`.
    Man,
}

/// What `cp` and `mv` take.
#[derive(Debug, Args)]
pub(crate) struct CopyArgs {
    /// Source: a local path, `-` (stdin), or s3://bucket/key (a `*`/`?` wildcard in the key).
    pub source: String,
    /// Destination: a local path, `-` (stdout), or s3://bucket/key (a trailing `/` means
    /// "into").
    pub destination: String,
    /// Copy a directory, or every object under s3://bucket/dir (the directory `dir/`:
    /// never `dir2/…` or `dir.txt` beside it).
    #[arg(long, short)]
    pub recursive: bool,
    /// Print the plan; transfer nothing.
    #[arg(long)]
    pub dryrun: bool,
    /// Start a large upload over instead of resuming an interrupted one.
    #[arg(long)]
    pub no_resume: bool,
    /// Copy this version of the source object (downloads).
    #[arg(long)]
    pub version_id: Option<String>,
    /// Which entries (relative paths; recursive copies).
    #[command(flatten)]
    pub filters: FilterArgs,
    /// Symbolic links.
    #[command(flatten)]
    pub links: LinkArgs,
    /// Object attributes.
    #[command(flatten)]
    pub attrs: AttrArgs,
}

/// `--include` / `--exclude`, with the AWS CLI's rules: every pattern is matched against
/// the path relative to the directory, in the order given, and the last one that matches
/// decides.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct FilterArgs {
    /// Skip relative paths matching this pattern (`*`, `?`, `[abc]`; repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Keep relative paths matching this pattern although an earlier --exclude matched
    /// (repeatable; the last matching filter wins).
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<String>,
}

/// Symbolic links in local sources.
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct LinkArgs {
    /// Skip symbolic links instead of following them (they are followed by default; a link
    /// loop or a broken link is reported).
    #[arg(long)]
    pub no_follow_symlinks: bool,
}

/// `--metadata-directive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "UPPER")]
pub(crate) enum MetadataDirective {
    /// Keep the source's content headers and metadata.
    Copy,
    /// Use the ones given (none given: none).
    Replace,
}

/// Object attributes of uploads and copies.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct AttrArgs {
    /// Checksum algorithm: CRC32, CRC32C, CRC64NVME, SHA1, SHA256.
    #[arg(long, value_parser = parse_checksum)]
    pub checksum: Option<ChecksumAlgorithm>,
    /// Content-Type (default: from the file extension).
    #[arg(long)]
    pub content_type: Option<String>,
    /// Cache-Control.
    #[arg(long)]
    pub cache_control: Option<String>,
    /// Content-Encoding.
    #[arg(long)]
    pub content_encoding: Option<String>,
    /// Content-Disposition.
    #[arg(long)]
    pub content_disposition: Option<String>,
    /// Content-Language.
    #[arg(long)]
    pub content_language: Option<String>,
    /// Expires: an RFC 3339 time (2026-12-31T00:00:00Z).
    #[arg(long, value_parser = parse_time)]
    pub expires: Option<std::time::SystemTime>,
    /// User metadata, NAME=VALUE (repeatable).
    #[arg(long, value_parser = parse_pair)]
    pub metadata: Vec<(String, String)>,
    /// S3→S3: COPY the source's metadata or REPLACE it with the attributes given (given
    /// attributes imply REPLACE).
    #[arg(long, value_enum)]
    pub metadata_directive: Option<MetadataDirective>,
    /// Storage class (e.g. STANDARD_IA).
    #[arg(long)]
    pub storage_class: Option<String>,
    /// Canned ACL: private, public-read, public-read-write, authenticated-read,
    /// bucket-owner-read, bucket-owner-full-control.
    #[arg(long)]
    pub acl: Option<String>,
    /// Server-side encryption: AES256 or aws:kms.
    #[arg(long)]
    pub sse: Option<String>,
    /// Object Lock retention and legal hold.
    #[command(flatten)]
    pub lock: ObjectLockArgs,
    /// The KMS key of `--sse aws:kms`.
    #[arg(long)]
    pub sse_kms_key_id: Option<String>,
    /// The encryption context of `--sse aws:kms`: a JSON object of strings
    /// (`{"project":"alpha"}`), or its base64 as S3 takes it.
    #[arg(long)]
    pub sse_kms_context: Option<String>,
    /// Server-side encryption with a customer key: AES256 (with --sse-c-key).
    #[arg(long)]
    pub sse_c: Option<String>,
    /// The customer key of --sse-c: 32 bytes, raw or base64 (needed again to read).
    #[arg(long, requires = "sse_c")]
    pub sse_c_key: Option<String>,
}

pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("not a size: `{text}`"))?;
    let shift = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("unknown size unit in `{text}` (use K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size too large: `{text}`"))
}

pub(crate) fn parse_provider(text: &str) -> Result<s3_wire::Provider, String> {
    s3_wire::Provider::from_id(text).ok_or_else(|| {
        let names: Vec<&str> = s3_wire::Provider::ALL.iter().map(|p| p.id()).collect();
        format!("unknown store `{text}` ({})", names.join(", "))
    })
}

pub(crate) fn parse_checksum(text: &str) -> Result<ChecksumAlgorithm, String> {
    text.to_ascii_uppercase()
        .parse()
        .map_err(|_| format!("unknown checksum `{text}` (CRC32, CRC32C, CRC64NVME, SHA1, SHA256)"))
}

pub(crate) fn parse_pair(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .ok_or_else(|| format!("expected NAME=VALUE, got `{text}`"))
}

pub(crate) fn parse_time(text: &str) -> Result<std::time::SystemTime, String> {
    s3_wire::xml::Timestamp::parse(text)
        .ok()
        .and_then(|t| t.to_system_time())
        .ok_or_else(|| format!("not a time: `{text}` (use RFC 3339, e.g. 2026-12-31T00:00:00Z)"))
}
