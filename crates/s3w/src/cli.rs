//! The command line: global flags, the commands and their arguments (clap).

use clap::{Parser, Subcommand};
use s3_wire::ops::ChecksumAlgorithm;

use crate::acl::AclArgs;
use crate::bucket_config::{ConfigArgs, VersioningArgs};
use crate::object_lock::{LegalHoldArgs, ObjectLockArgs, RetentionArgs};
use crate::presign_post::PostArgs;
use crate::report::*;
use crate::restore::RestoreArgs;

/// `s3w`: copy, list, sync and stream objects of S3-compatible stores.
#[derive(Debug, Parser)]
#[command(name = "s3w", version, about)]
pub(crate) struct Cli {
    /// The AWS profile to read from ~/.aws/config and ~/.aws/credentials.
    #[arg(long, global = true)]
    pub profile: Option<String>,
    /// The region to sign for.
    #[arg(long, global = true)]
    pub region: Option<String>,
    /// The endpoint URL (e.g. http://127.0.0.1:9000).
    #[arg(long, global = true)]
    pub endpoint_url: Option<String>,
    /// One JSON object per line for every listing entry and every result.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// No progress output.
    #[arg(long, global = true)]
    pub no_progress: bool,
    /// Objects transferred at once.
    #[arg(long, global = true, default_value_t = 8)]
    pub concurrency: usize,
    /// Part size of multipart transfers, in bytes (suffixes K, M, G: MiB-based).
    #[arg(long, global = true, value_parser = parse_size)]
    pub part_size: Option<u64>,
    /// Memory the transfers may hold at once, in bytes (suffixes K, M, G).
    #[arg(long, global = true, value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Print each request's method, path, status, attempt and timing to stderr.
    #[arg(long, global = true)]
    pub debug: bool,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List buckets, or the prefixes and objects under s3://bucket/prefix.
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
    },
    /// Copy local→S3, S3→local or S3→S3.
    Cp(CopyArgs),
    /// Move: copy, then delete the source.
    Mv(CopyArgs),
    /// Delete an object, or with --recursive every object under a directory.
    Rm {
        /// s3://bucket/key; with --recursive s3://bucket/dir (the directory `dir/`: never
        /// `dir2/…` or `dir.txt` beside it).
        path: String,
        /// Every object under the directory (DeleteObjects, 1,000 keys a request).
        #[arg(long, short)]
        recursive: bool,
        /// Print what would be deleted; delete nothing.
        #[arg(long)]
        dryrun: bool,
    },
    /// Make a bucket.
    Mb {
        /// s3://bucket
        bucket: String,
    },
    /// Remove a bucket.
    Rb {
        /// s3://bucket
        bucket: String,
        /// Delete every object first.
        #[arg(long)]
        force: bool,
    },
    /// Make a destination like its source: copy what is missing or differs (size, or a
    /// newer source), optionally delete what the source lacks.
    Sync {
        /// A local directory or s3://bucket/prefix.
        source: String,
        /// A local directory or s3://bucket/prefix.
        destination: String,
        /// Delete destination files/objects the source lacks.
        #[arg(long)]
        delete: bool,
        /// Skip relative paths matching this glob (`*`, `?`; repeatable).
        #[arg(long)]
        exclude: Vec<String>,
        /// Keep relative paths matching this glob even if excluded (repeatable).
        #[arg(long)]
        include: Vec<String>,
        /// Print the plan; change nothing.
        #[arg(long)]
        dryrun: bool,
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
    },
    /// Upload stdin (any length) to s3://bucket/key.
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
    /// Show an object's Object Lock retention, or set it (--mode, --until / --days).
    Retention(RetentionArgs),
    /// Show an object's legal hold, or put it --on / --off.
    LegalHold(LegalHoldArgs),
    /// Restore a temporary copy of an archived (GLACIER, DEEP_ARCHIVE) object.
    Restore(RestoreArgs),
    /// Show a bucket's or an object's ACL, or replace it (--canned, --grant, --put FILE).
    Acl(AclArgs),
}

/// What `cp` and `mv` take.
#[derive(Debug, clap::Args)]
pub(crate) struct CopyArgs {
    /// Source: a local path or s3://bucket/key (a `*`/`?` wildcard in the key's last part).
    pub source: String,
    /// Destination: a local path or s3://bucket/key (a trailing `/` means "into").
    pub destination: String,
    /// Copy a directory, or every object under s3://bucket/dir (the directory `dir/`:
    /// never `dir2/…` or `dir.txt` beside it).
    #[arg(long, short)]
    pub recursive: bool,
    /// Print the plan; transfer nothing.
    #[arg(long)]
    pub dryrun: bool,
    /// Object attributes.
    #[command(flatten)]
    pub attrs: AttrArgs,
}

/// Object attributes of uploads.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AttrArgs {
    /// Checksum algorithm: CRC32, CRC32C, CRC64NVME, SHA1, SHA256.
    #[arg(long, value_parser = parse_checksum)]
    pub checksum: Option<ChecksumAlgorithm>,
    /// Content-Type (default: guessed from the file extension).
    #[arg(long)]
    pub content_type: Option<String>,
    /// User metadata, NAME=VALUE (repeatable).
    #[arg(long, value_parser = parse_pair)]
    pub metadata: Vec<(String, String)>,
    /// Storage class (e.g. STANDARD_IA).
    #[arg(long)]
    pub storage_class: Option<String>,
    /// Server-side encryption: AES256 or aws:kms.
    #[arg(long)]
    pub sse: Option<String>,
    /// Object Lock retention and legal hold.
    #[command(flatten)]
    pub lock: ObjectLockArgs,
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
