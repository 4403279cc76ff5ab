//! The library behind the `s3w` binary: argument parsing ([`Cli`]), the commands, and
//! the one-line error reports. Built on the public API of `s3-wire` only.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use s3_wire::credentials::{Env, ProcessEnv};
use s3_wire::ops::ops::DeleteObjects;
use s3_wire::ops::{
    BucketName, ByteRange, ChecksumAlgorithm, CopySource, CreateBucket, DeleteBucket, DeleteObject,
    GetObject, HeadObject, ListBuckets, ListObjectsV2, ObjectAttributes, ObjectKey, PutObject,
    ServerSideEncryption, StorageClass,
};
use s3_wire::{Client, ClientBuilder, Destination, Error, ErrorKind, UploadSource, bucket, key};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

/// `s3w`: copy, list, sync and stream objects of S3-compatible stores.
#[derive(Debug, Parser)]
#[command(name = "s3w", version, about)]
pub struct Cli {
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
pub enum Command {
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
    /// Delete an object, or every object under a prefix with --recursive.
    Rm {
        /// s3://bucket/key or s3://bucket/prefix.
        path: String,
        /// Every object under the prefix (DeleteObjects, 1,000 keys a request).
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
    /// Total size and object count under s3://bucket/prefix.
    Du {
        /// s3://bucket[/prefix]
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
    },
}

/// What `cp` and `mv` take.
#[derive(Debug, clap::Args)]
pub struct CopyArgs {
    /// Source: a local path or s3://bucket/key (a `*`/`?` wildcard in the key's last part).
    pub source: String,
    /// Destination: a local path or s3://bucket/key (a trailing `/` means "into").
    pub destination: String,
    /// Copy a directory or every object under a prefix.
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
pub struct AttrArgs {
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
}

fn parse_size(text: &str) -> Result<u64, String> {
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

fn parse_checksum(text: &str) -> Result<ChecksumAlgorithm, String> {
    text.to_ascii_uppercase()
        .parse()
        .map_err(|_| format!("unknown checksum `{text}` (CRC32, CRC32C, CRC64NVME, SHA1, SHA256)"))
}

fn parse_pair(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .ok_or_else(|| format!("expected NAME=VALUE, got `{text}`"))
}

/// A location: a local path or an S3 bucket and key (or prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local path (`-` is stdin/stdout where a command allows it).
    Local(PathBuf),
    /// `s3://bucket/key`; the key may be empty.
    S3 {
        /// The bucket.
        bucket: String,
        /// The key or prefix.
        key: String,
    },
}

impl Location {
    /// Parses `s3://bucket/key` or a local path.
    pub fn parse(text: &str) -> Location {
        match text.strip_prefix("s3://") {
            Some(rest) => {
                let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
                Location::S3 {
                    bucket: bucket.to_owned(),
                    key: key.to_owned(),
                }
            }
            None => Location::Local(PathBuf::from(text)),
        }
    }
}

/// A failure reported to the user as one line; with the S3 error code and request id
/// where the store answered with an error (they go into `--json` output).
#[derive(Debug)]
pub struct Failure {
    /// The line (without the `s3w: ` prefix).
    pub message: String,
    /// The S3 error code.
    pub code: Option<String>,
    /// The request id of the failed request.
    pub request_id: Option<String>,
}

impl Failure {
    /// A failure with no S3 error behind it.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: None,
            request_id: None,
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::new(message)
    }
}

/// [`describe`] with the S3 error code and request id kept.
fn failure_of(what: &str, bucket_name: &str, error: &Error) -> Failure {
    let s3 = error.service_error();
    Failure {
        message: describe(what, bucket_name, error),
        code: s3.map(|s| s.code.clone()),
        request_id: s3.and_then(|s| s.request_id.clone()),
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

type Result<T, E = Failure> = std::result::Result<T, E>;

/// The prefix that marks a usage error (exit code 2).
const USAGE: &str = "usage: ";

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(format!("{USAGE}{}", message.into()))
}

/// One line for a library error: what failed, the S3 code and request id, what to try.
pub fn describe(what: &str, bucket_name: &str, error: &Error) -> String {
    if let Some(s3) = error.service_error() {
        let id = s3
            .request_id
            .as_deref()
            .map(|id| format!(", request id {id}"))
            .unwrap_or_default();
        let hint = match s3.code.as_str() {
            "NoSuchBucket" => format!(
                "bucket `{bucket_name}` does not exist ({}{id}); create it with `s3w mb s3://{bucket_name}`",
                s3.code
            ),
            "NoSuchKey" | "NotFound" => format!(
                "{what}: no such object ({}{id}); list the bucket with `s3w ls s3://{bucket_name}/`",
                s3.code
            ),
            "AccessDenied" | "InvalidAccessKeyId" | "SignatureDoesNotMatch" => format!(
                "{what}: access denied ({}{id}); check the credentials (--profile, AWS_ACCESS_KEY_ID) and the bucket policy",
                s3.code
            ),
            "BucketNotEmpty" => format!(
                "{what}: bucket `{bucket_name}` is not empty ({}{id}); use `s3w rb --force`",
                s3.code
            ),
            _ => format!(
                "{what}: {} ({}{id})",
                s3.message
                    .as_deref()
                    .unwrap_or("the store refused the request"),
                s3.code
            ),
        };
        return hint;
    }
    if error.is_not_found() {
        return format!("{what}: not found (404); check the bucket and key");
    }
    match error.kind() {
        ErrorKind::Transport(_) | ErrorKind::Timeout(_) => format!(
            "{what}: {error}; check --endpoint-url / AWS_ENDPOINT_URL and that the store is reachable"
        ),
        ErrorKind::Credentials => format!(
            "{what}: {error}; set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or choose a --profile"
        ),
        _ => format!("{what}: {}", one_line(&error.to_string())),
    }
}

fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

/// Runs the CLI with these arguments; returns the process exit code (0 ok, 1 failed,
/// 2 usage).
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let code = error.exit_code();
            let _ = error.print();
            return code;
        }
    };
    if cli.debug {
        let filter = tracing_subscriber::filter::Targets::new()
            .with_target("s3_wire", tracing_subscriber::filter::LevelFilter::DEBUG);
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        let _ = tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(false),
            )
            .with(filter)
            .try_init();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("s3w: cannot start the runtime: {error}");
            return 1;
        }
    };
    runtime.block_on(run(cli))
}

/// The process environment with `AWS_PROFILE` replaced by `--profile`.
#[derive(Debug)]
struct ProfileEnv(Option<String>);

impl Env for ProfileEnv {
    fn var(&self, name: &str) -> Option<String> {
        if name == "AWS_PROFILE"
            && let Some(profile) = &self.0
        {
            return Some(profile.clone());
        }
        ProcessEnv.var(name)
    }
}

async fn client(cli: &Cli) -> Result<Client> {
    let mut builder: ClientBuilder =
        ClientBuilder::load_from_env_with(Arc::new(ProfileEnv(cli.profile.clone()))).await;
    if let Some(endpoint) = &cli.endpoint_url {
        builder = builder.endpoint(endpoint.clone());
    }
    if let Some(region) = &cli.region {
        builder = builder.region(region.clone());
    }
    let mut options = s3_wire::TransferOptions::default();
    if let Some(part) = cli.part_size {
        options.part_size = part;
    }
    builder = builder.transfer_options(options);
    if let Some(memory) = cli.max_memory {
        builder = builder.transfer_memory(memory);
    }
    builder.build().map_err(|e| {
        Failure::new(format!(
            "cannot configure the client: {}",
            one_line(&e.to_string())
        ))
    })
}

/// Output: plain lines or JSON lines on stdout; errors on stderr.
#[derive(Debug, Clone)]
struct Out {
    json: bool,
    quiet: bool,
    failed: Arc<AtomicBool>,
    /// Live progress bars on stderr (a terminal, and neither --no-progress, --quiet nor --json).
    bars: Option<indicatif::MultiProgress>,
}

impl Out {
    fn line(&self, text: impl AsRef<str>, value: Value) {
        if self.json {
            println!("{value}");
        } else if !self.quiet {
            match &self.bars {
                Some(bars) => bars.suspend(|| println!("{}", text.as_ref())),
                None => println!("{}", text.as_ref()),
            }
        }
    }

    /// A bar for one transfer, driven by the library's progress listener.
    fn transfer_bar(&self, label: &str) -> Option<indicatif::ProgressBar> {
        let bars = self.bars.as_ref()?;
        let bar = bars.add(indicatif::ProgressBar::new(0));
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:30!} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(label.to_owned());
        Some(bar)
    }

    fn error(&self, failure: impl Into<Failure>, value: Value) {
        let failure = failure.into();
        self.failed.store(true, Ordering::SeqCst);
        if self.json {
            let mut value = value;
            value["error"] = json!(failure.message);
            value["code"] = json!(failure.code);
            value["request_id"] = json!(failure.request_id);
            println!("{value}");
        }
        eprintln!("s3w: {}", failure.message);
    }
}

async fn run(cli: Cli) -> i32 {
    use std::io::IsTerminal;
    let show_bars = !cli.no_progress && !cli.quiet && !cli.json && std::io::stderr().is_terminal();
    let out = Out {
        json: cli.json,
        quiet: cli.quiet,
        failed: Arc::new(AtomicBool::new(false)),
        bars: show_bars.then(|| {
            indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stderr())
        }),
    };
    let result = match client(&cli).await {
        Ok(client) => dispatch(&cli, &client, &out).await,
        Err(failure) => Err(failure),
    };
    match result {
        Err(failure) => {
            eprintln!("s3w: {failure}");
            if failure.message.starts_with(USAGE) {
                2
            } else {
                1
            }
        }
        Ok(()) if out.failed.load(Ordering::SeqCst) => 1,
        Ok(()) => 0,
    }
}

fn s3_location(text: &str) -> Result<(String, String)> {
    match Location::parse(text) {
        Location::S3 { bucket, key } if !bucket.is_empty() => Ok((bucket, key)),
        _ => Err(usage(format!("expected s3://bucket/key, got `{text}`"))),
    }
}

fn bucket_name(name: &str) -> Result<BucketName> {
    bucket(name).map_err(|e| Failure::new(format!("invalid bucket name `{name}`: {e}")))
}

fn key_name(name: &str) -> Result<ObjectKey> {
    key(name).map_err(|e| Failure::new(format!("invalid key `{name}`: {e}")))
}

fn object_key(text: &str) -> Result<(BucketName, ObjectKey, String, String)> {
    let (b, k) = s3_location(text)?;
    if k.is_empty() {
        return Err(usage(format!(
            "`{text}` names no object: expected s3://bucket/key"
        )));
    }
    Ok((bucket_name(&b)?, key_name(&k)?, b, k))
}

async fn dispatch(cli: &Cli, client: &Client, out: &Out) -> Result<()> {
    match &cli.command {
        Command::Ls {
            path,
            recursive,
            human_readable,
            summarize,
        } => {
            ls(
                client,
                out,
                path.as_deref(),
                *recursive,
                *human_readable,
                *summarize,
            )
            .await
        }
        Command::Cp(args) => cp(cli, client, out, args, false).await,
        Command::Mv(args) => cp(cli, client, out, args, true).await,
        Command::Rm {
            path,
            recursive,
            dryrun,
        } => rm(client, out, path, *recursive, *dryrun).await,
        Command::Mb { bucket: name } => {
            let (b, _) = s3_location(name)?;
            client
                .create_bucket(CreateBucket::new(bucket_name(&b)?))
                .await
                .map_err(|e| failure_of(&format!("make bucket `{b}`"), &b, &e))?;
            out.line(
                format!("make_bucket: {b}"),
                json!({"bucket": b, "result": "created"}),
            );
            Ok(())
        }
        Command::Rb {
            bucket: name,
            force,
        } => {
            let (b, _) = s3_location(name)?;
            if *force {
                rm(client, out, &format!("s3://{b}/"), true, false).await?;
                if out.failed.load(Ordering::SeqCst) {
                    return Err(Failure::new(format!(
                        "remove bucket `{b}`: not every object was deleted"
                    )));
                }
            }
            client
                .delete_bucket(DeleteBucket::new(bucket_name(&b)?))
                .await
                .map_err(|e| failure_of(&format!("remove bucket `{b}`"), &b, &e))?;
            out.line(
                format!("remove_bucket: {b}"),
                json!({"bucket": b, "result": "removed"}),
            );
            Ok(())
        }
        Command::Sync {
            source,
            destination,
            delete,
            exclude,
            include,
            dryrun,
            attrs,
        } => {
            let filter = Filter {
                exclude: exclude.clone(),
                include: include.clone(),
            };
            sync(
                cli,
                client,
                out,
                source,
                destination,
                *delete,
                &filter,
                *dryrun,
                attrs,
            )
            .await
        }
        Command::Du {
            path,
            human_readable,
        } => {
            let (b, prefix) = s3_location(path)?;
            let (objects, _) = list_all(client, &b, &prefix, false).await?;
            let total: u64 = objects.iter().map(|o| o.size).sum();
            let size = if *human_readable {
                human(total)
            } else {
                total.to_string()
            };
            out.line(
                format!("{size}\t{} objects\t{path}", objects.len()),
                json!({"path": path, "objects": objects.len(), "size": total}),
            );
            Ok(())
        }
        Command::AbortStale {
            path,
            older_than_hours,
        } => {
            let (b, prefix) = s3_location(path)?;
            let swept = client
                .abort_stale_uploads(
                    &bucket_name(&b)?,
                    &prefix,
                    Duration::from_secs(older_than_hours * 3600),
                )
                .await
                .map_err(|e| failure_of(&format!("list multipart uploads in s3://{b}"), &b, &e))?;
            for upload in &swept.aborted {
                out.line(
                    format!("aborted: s3://{b}/{} ({})", upload.key, upload.upload_id),
                    json!({"operation": "abort", "bucket": b, "key": upload.key, "upload_id": upload.upload_id}),
                );
            }
            for (upload, error) in &swept.failed {
                out.error(
                    failure_of(&format!("abort upload {} of s3://{b}/{}", upload.upload_id, upload.key), &b, error),
                    json!({"operation": "abort", "bucket": b, "key": upload.key, "upload_id": upload.upload_id}),
                );
            }
            out.line(
                format!("{} aborted, {} kept", swept.aborted.len(), swept.kept),
                json!({"aborted": swept.aborted.len(), "kept": swept.kept, "failed": swept.failed.len()}),
            );
            Ok(())
        }
        Command::Cat { path, range } => cat(client, path, range.as_deref()).await,
        Command::Put { path, attrs } => {
            let (bn, kn, b, k) = object_key(path)?;
            let started = Instant::now();
            let upload = client
                .upload(bn, kn, UploadSource::reader(tokio::io::stdin(), None))
                .attributes(attributes(attrs, None)?)
                .checksum(attrs.checksum.or(Some(ChecksumAlgorithm::Crc32)));
            match upload.await {
                Ok(stored) => out.line(
                    format!("upload: - to s3://{b}/{k}"),
                    json!({"operation": "put", "key": k, "bucket": b, "size": stored.size,
                           "etag": stored.etag.as_ref().map(|e| e.as_str().to_owned()),
                           "duration_ms": started.elapsed().as_millis() as u64}),
                ),
                Err(e) => {
                    return Err(failure_of(&format!("upload to s3://{b}/{k}"), &b, &e));
                }
            }
            Ok(())
        }
        Command::Stat { path } => stat(client, out, path).await,
        Command::Presign {
            path,
            expires_in,
            method,
        } => {
            let (bn, kn, b, _) = object_key(path)?;
            let expires = Duration::from_secs(*expires_in);
            let signed = match method.to_ascii_uppercase().as_str() {
                "GET" => client.presign(&GetObject::new(bn, kn), expires).await,
                "PUT" => client.presign(&PutObject::new(bn, kn), expires).await,
                other => return Err(usage(format!("--method {other}: use GET or PUT"))),
            }
            .map_err(|e| failure_of("presign", &b, &e))?;
            out.line(
                signed.url(),
                json!({"url": signed.url(), "expires_in": expires_in}),
            );
            Ok(())
        }
    }
}

fn human(size: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = size as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{size} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// One listed object.
#[derive(Debug, Clone)]
struct Listed {
    key: String,
    size: u64,
    etag: Option<String>,
    modified: Option<std::time::SystemTime>,
    /// LastModified as the store sent it (RFC 3339, UTC).
    modified_text: String,
    checksum_algorithms: Vec<String>,
}

async fn list_all(
    client: &Client,
    b: &str,
    prefix: &str,
    delimiter: bool,
) -> Result<(Vec<Listed>, Vec<String>)> {
    match list_pages(client, b, prefix, delimiter, true).await {
        // A store that says `EncodingType=url` but sends keys unencoded (s3s-fs; a `%` in a
        // common prefix is not always recognised as such): again without the encoding.
        Err(e) if e.is_unencoded_listing() || matches!(e.kind(), ErrorKind::Operation(_)) => {
            list_pages(client, b, prefix, delimiter, false).await
        }
        other => other,
    }
    .map_err(|e| failure_of(&format!("list s3://{b}/{prefix}"), b, &e))
}

async fn list_pages(
    client: &Client,
    b: &str,
    prefix: &str,
    delimiter: bool,
    url_encoding: bool,
) -> Result<(Vec<Listed>, Vec<String>), Error> {
    let mut request = ListObjectsV2::new(bucket(b)?).url_encoding(url_encoding);
    if !prefix.is_empty() {
        request = request.prefix(prefix);
    }
    if delimiter {
        request = request.delimiter("/");
    }
    let mut pages = client.list_objects_v2_pages(request);
    let (mut objects, mut prefixes) = (Vec::new(), Vec::new());
    while let Some(page) = pages.next_page().await {
        let page = page?;
        for object in page.result.contents {
            objects.push(Listed {
                key: object.key,
                size: object.size,
                etag: object.etag.map(|e| e.as_str().to_owned()),
                modified: object.last_modified.to_system_time(),
                modified_text: object.last_modified.to_string(),
                checksum_algorithms: object.checksum_algorithms,
            });
        }
        prefixes.extend(page.result.common_prefixes);
    }
    Ok((objects, prefixes))
}

async fn ls(
    client: &Client,
    out: &Out,
    path: Option<&str>,
    recursive: bool,
    human_readable: bool,
    summarize: bool,
) -> Result<()> {
    let Some(path) = path.filter(|p| *p != "s3://") else {
        let mut pages = client.list_buckets_pages(ListBuckets::new());
        while let Some(page) = pages.next_page().await {
            let page = page.map_err(|e| failure_of("list buckets", "", &e))?;
            for b in page.result.buckets {
                out.line(&b.name, json!({"bucket": b.name}));
            }
        }
        return Ok(());
    };
    let (b, prefix) = s3_location(path)?;
    let (objects, prefixes) = list_all(client, &b, &prefix, !recursive).await?;
    let size_text = |size: u64| {
        if human_readable {
            human(size)
        } else {
            size.to_string()
        }
    };
    for p in &prefixes {
        out.line(format!("{:>32} {p}", "PRE"), json!({"prefix": p}));
    }
    let mut total = 0u64;
    for o in &objects {
        total += o.size;
        out.line(
            format!(
                "{:19} {:>12} {}",
                o.modified_text.replace('T', " ").get(..19).unwrap_or(""),
                size_text(o.size),
                o.key
            ),
            json!({"key": o.key, "size": o.size, "etag": o.etag,
                   "last_modified": o.modified_text, "checksum_algorithms": o.checksum_algorithms}),
        );
    }
    if summarize {
        out.line(
            format!(
                "Total Objects: {}\n   Total Size: {}",
                objects.len(),
                size_text(total)
            ),
            json!({"total_objects": objects.len(), "total_size": total}),
        );
    }
    Ok(())
}

/// Matches `text` against a glob with `*` (any run, `/` included) and `?` (one char).
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

fn content_type_for(path: &str) -> Option<&'static str> {
    let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" => "text/plain",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "js" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "tar" => "application/x-tar",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "mp4" => "video/mp4",
        "mp3" => "audio/mpeg",
        "wasm" => "application/wasm",
        _ => return None,
    })
}

fn attributes(attrs: &AttrArgs, path: Option<&str>) -> Result<ObjectAttributes> {
    let mut a = ObjectAttributes::new();
    if let Some(t) = attrs
        .content_type
        .as_deref()
        .or_else(|| path.and_then(content_type_for))
    {
        a = a.content_type(t);
    }
    for (n, v) in &attrs.metadata {
        a = a.metadata(n.clone(), v.clone());
    }
    if let Some(class) = &attrs.storage_class {
        a = a.storage_class(StorageClass::parse(class));
    }
    match attrs.sse.as_deref() {
        None => {}
        Some("AES256") => a = a.server_side_encryption(ServerSideEncryption::S3),
        Some("aws:kms") => {
            a = a.server_side_encryption(ServerSideEncryption::Kms {
                key_id: None,
                context: None,
                bucket_key: None,
            })
        }
        Some(other) => return Err(usage(format!("--sse {other}: use AES256 or aws:kms"))),
    }
    Ok(a)
}

/// One planned copy.
#[derive(Debug, Clone)]
enum Job {
    Upload(PathBuf, String, String),
    Download(String, String, PathBuf),
    Copy(String, String, String, String),
}

fn local_files(root: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| Failure::new(format!("cannot read directory {}: {e}", dir.display())))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| Failure::new(format!("cannot read {}: {e}", dir.display())))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| Failure::new(format!("cannot stat {}: {e}", path.display())))?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let relative = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                found.push((path, relative));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(found)
}

fn join_key(prefix: &str, name: &str) -> String {
    if prefix.is_empty() || prefix.ends_with('/') {
        format!("{prefix}{name}")
    } else {
        format!("{prefix}/{name}")
    }
}

fn file_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

async fn plan(client: &Client, args: &CopyArgs) -> Result<Vec<Job>> {
    let source = Location::parse(&args.source);
    let destination = Location::parse(&args.destination);
    let into = args.destination.ends_with('/');
    Ok(match (source, destination) {
        (Location::Local(_), Location::Local(_)) => {
            return Err(usage(
                "one side of cp must be s3://bucket/key (local to local is not supported)",
            ));
        }
        (Location::Local(path), Location::S3 { bucket: b, key: k }) => {
            if args.recursive {
                local_files(&path)?
                    .into_iter()
                    .map(|(file, rel)| Job::Upload(file, b.clone(), join_key(&k, &rel)))
                    .collect()
            } else {
                if path.is_dir() {
                    return Err(usage(format!(
                        "{} is a directory: use --recursive",
                        path.display()
                    )));
                }
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let k = if k.is_empty() || into {
                    join_key(&k, &name)
                } else {
                    k
                };
                vec![Job::Upload(path, b, k)]
            }
        }
        (Location::S3 { bucket: b, key: k }, dest) => {
            let wildcard = k.contains('*') || k.contains('?');
            let objects: Vec<(String, String)> = if wildcard || args.recursive {
                let prefix = if wildcard {
                    k[..k.find(['*', '?']).unwrap_or(k.len())].to_owned()
                } else {
                    k.clone()
                };
                let base = if wildcard {
                    prefix.rfind('/').map(|i| &prefix[..=i]).unwrap_or("")
                } else {
                    k.as_str()
                };
                let (listed, _) = list_all(client, &b, &prefix, false).await?;
                listed
                    .into_iter()
                    .filter(|o| !wildcard || wildcard_match(&k, &o.key))
                    .map(|o| {
                        let rel = o.key[base.len()..].trim_start_matches('/').to_owned();
                        let rel = if wildcard {
                            file_name(&o.key).to_owned()
                        } else {
                            rel
                        };
                        (o.key, rel)
                    })
                    .collect()
            } else {
                vec![(k.clone(), file_name(&k).to_owned())]
            };
            let many = wildcard || args.recursive;
            objects
                .into_iter()
                .map(|(key, rel)| match &dest {
                    Location::Local(path) => {
                        let target = if many || into || path.is_dir() {
                            path.join(&rel)
                        } else {
                            path.clone()
                        };
                        Job::Download(b.clone(), key, target)
                    }
                    Location::S3 {
                        bucket: db,
                        key: dk,
                    } => {
                        let target = if many || into || dk.is_empty() {
                            join_key(dk, &rel)
                        } else {
                            dk.clone()
                        };
                        Job::Copy(b.clone(), key, db.clone(), target)
                    }
                })
                .collect()
        }
    })
}

async fn run_job(
    client: Client,
    job: Job,
    attrs: AttrArgs,
    delete_source: bool,
    bar: Option<indicatif::ProgressBar>,
    total: Option<indicatif::ProgressBar>,
) -> (Value, Result<String>) {
    let started = Instant::now();
    let listener = {
        let bar = bar.clone();
        // What this transfer added to the total line: (bytes committed, its size known).
        let added = std::sync::Mutex::new((0u64, false));
        move |progress: s3_wire::Progress| {
            if let Some(bar) = &bar {
                if let Some(size) = progress.total {
                    bar.set_length(size);
                }
                bar.set_position(progress.committed);
            }
            if let (Some(total), Ok(mut added)) = (&total, added.lock()) {
                if let (Some(size), false) = (progress.total, added.1) {
                    total.inc_length(size);
                    added.1 = true;
                }
                // `committed` only grows (true across retries).
                total.inc(progress.committed.saturating_sub(added.0));
                added.0 = added.0.max(progress.committed);
            }
        }
    };
    let (text, mut value, result) = match &job {
        Job::Upload(path, b, k) => {
            let text = format!("upload: {} to s3://{b}/{k}", path.display());
            let value = json!({"operation": "upload", "source": path.display().to_string(), "bucket": b, "key": k});
            let result = async {
                let attributes = attributes(&attrs, path.to_str())?;
                let output = client
                    .upload(bucket_name(b)?, key_name(k)?, UploadSource::file(path))
                    .on_progress(listener)
                    .attributes(attributes)
                    .checksum(attrs.checksum.or(Some(ChecksumAlgorithm::Crc32)))
                    .await
                    .map_err(|e| failure_of(&format!("upload {} to s3://{b}/{k}", path.display()), b, &e))?;
                if delete_source {
                    std::fs::remove_file(path).map_err(|e| Failure::new(format!("remove {}: {e}", path.display())))?;
                }
                Ok(json!({"size": output.size, "etag": output.etag.as_ref().map(|e| e.as_str().to_owned())}))
            }
            .await;
            (text, value, result)
        }
        Job::Download(b, k, path) => {
            let text = format!("download: s3://{b}/{k} to {}", path.display());
            let value = json!({"operation": "download", "bucket": b, "key": k, "destination": path.display().to_string()});
            let result = async {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| Failure::new(format!("create {}: {e}", parent.display())))?;
                }
                let output = client
                    .download(
                        bucket_name(b)?,
                        key_name(k)?,
                        Destination::file(path.clone()),
                    )
                    .on_progress(listener)
                    .await
                    .map_err(|e| failure_of(&format!("download s3://{b}/{k}"), b, &e))?;
                if delete_source {
                    client
                        .delete_object(DeleteObject::new(bucket_name(b)?, key_name(k)?))
                        .await
                        .map_err(|e| failure_of(&format!("delete s3://{b}/{k}"), b, &e))?;
                }
                Ok(json!({"size": output.size}))
            }
            .await;
            (text, value, result)
        }
        Job::Copy(sb, sk, db, dk) => {
            let text = format!("copy: s3://{sb}/{sk} to s3://{db}/{dk}");
            let value = json!({"operation": "copy", "source": format!("s3://{sb}/{sk}"), "bucket": db, "key": dk});
            let result = async {
                let output = client
                    .copy(CopySource::new(bucket_name(sb)?, key_name(sk)?), bucket_name(db)?, key_name(dk)?)
                    .on_progress(listener)
                    .await
                    .map_err(|e| failure_of(&format!("copy s3://{sb}/{sk}"), sb, &e))?;
                if delete_source {
                    client
                        .delete_object(DeleteObject::new(bucket_name(sb)?, key_name(sk)?))
                        .await
                        .map_err(|e| failure_of(&format!("delete s3://{sb}/{sk}"), sb, &e))?;
                }
                Ok(json!({"size": output.size, "etag": output.etag.as_ref().map(|e| e.as_str().to_owned())}))
            }
            .await;
            (text, value, result)
        }
    };
    value["duration_ms"] = json!(started.elapsed().as_millis() as u64);
    match result {
        Ok(extra) => {
            if let (Some(v), Value::Object(extra)) = (value.as_object_mut(), extra) {
                v.extend(extra);
            }
            (value, Ok(text))
        }
        Err(failure) => (value, Err(failure)),
    }
}

async fn cp(
    cli: &Cli,
    client: &Client,
    out: &Out,
    args: &CopyArgs,
    delete_source: bool,
) -> Result<()> {
    // Bad attribute values are usage errors, before anything is transferred.
    attributes(&args.attrs, None)?;
    let jobs = plan(client, args).await?;
    if jobs.is_empty() {
        return Err(Failure::new(format!("nothing matches `{}`", args.source)));
    }
    if args.dryrun {
        for job in &jobs {
            out.line(
                format!("(dryrun) {}", describe_job(job)),
                json!({"dryrun": describe_job(job)}),
            );
        }
        return Ok(());
    }
    run_jobs(cli, client, out, jobs, &args.attrs, delete_source).await
}

async fn run_jobs(
    cli: &Cli,
    client: &Client,
    out: &Out,
    jobs: Vec<Job>,
    attrs: &AttrArgs,
    delete_source: bool,
) -> Result<()> {
    let limit = Arc::new(tokio::sync::Semaphore::new(cli.concurrency.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    let total = out.bars.as_ref().map(|bars| {
        let bar = bars.add(indicatif::ProgressBar::new(0));
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "total: {msg} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} [{elapsed}]",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let count = jobs.len();
    let mut finished = 0usize;
    let mut finish_one = |done| {
        finished += 1;
        if let Some(total) = &total {
            total.set_message(format!("{finished}/{count} objects"));
        }
        report(out, done);
    };
    if let Some(total) = &total {
        total.set_message(format!("0/{count} objects"));
    }
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        // Take a permit, reporting results that finish meanwhile (not only at the end).
        let permit = loop {
            tokio::select! {
                permit = limit.clone().acquire_owned() => break permit,
                Some(done) = tasks.join_next(), if !tasks.is_empty() => finish_one(done),
            }
        };
        let permit = permit.map_err(|_| Failure::new("internal: semaphore closed"))?;
        let Some(job) = jobs.next() else { break };
        // A bar only for a transfer that runs now.
        let bar = out.transfer_bar(&describe_job(&job));
        let (client, attrs, total) = (client.clone(), attrs.clone(), total.clone());
        let bars = out.bars.clone();
        tasks.spawn(async move {
            let result = run_job(client, job, attrs, delete_source, bar.clone(), total).await;
            if let Some(bar) = bar {
                // A final draw at the final position (a fast transfer can end between two
                // rate-limited draws), then off the screen: the result line is the record,
                // and a thousand finished bars would not fit.
                bar.finish();
                if let Some(bars) = bars {
                    bars.remove(&bar);
                }
            }
            drop(permit);
            result
        });
    }
    while let Some(done) = tasks.join_next().await {
        finish_one(done);
    }
    if let Some(total) = &total {
        total.finish();
    }
    Ok(())
}

/// Prints one finished job's result.
fn report(out: &Out, done: std::result::Result<(Value, Result<String>), tokio::task::JoinError>) {
    match done {
        Ok((value, Ok(text))) => out.line(text, value),
        Ok((value, Err(failure))) => out.error(failure, value),
        Err(panic) => out.error(format!("a transfer task failed: {panic}"), json!({})),
    }
}

async fn rm(client: &Client, out: &Out, path: &str, recursive: bool, dryrun: bool) -> Result<()> {
    let (b, k) = s3_location(path)?;
    let keys: Vec<String> = if recursive {
        list_all(client, &b, &k, false)
            .await?
            .0
            .into_iter()
            .map(|o| o.key)
            .collect()
    } else {
        if k.is_empty() {
            return Err(usage(format!(
                "`{path}` names no object: use --recursive to delete a prefix"
            )));
        }
        vec![k.clone()]
    };
    if dryrun {
        for key in &keys {
            out.line(
                format!("(dryrun) delete: s3://{b}/{key}"),
                json!({"dryrun": "delete", "bucket": b, "key": key}),
            );
        }
        return Ok(());
    }
    if !recursive {
        client
            .delete_object(DeleteObject::new(bucket_name(&b)?, key_name(&k)?))
            .await
            .map_err(|e| failure_of(&format!("delete s3://{b}/{k}"), &b, &e))?;
        out.line(
            format!("delete: s3://{b}/{k}"),
            json!({"operation": "delete", "bucket": b, "key": k}),
        );
        return Ok(());
    }
    for batch in keys.chunks(1000) {
        let names = batch
            .iter()
            .map(|k| key_name(k))
            .collect::<Result<Vec<_>>>()?;
        let result = client
            .delete_objects(DeleteObjects::new(bucket_name(&b)?, names))
            .await
            .map_err(|e| failure_of(&format!("delete objects in s3://{b}"), &b, &e))?;
        for deleted in &result.result.deleted {
            out.line(
                format!("delete: s3://{b}/{}", deleted.key),
                json!({"operation": "delete", "bucket": b, "key": deleted.key}),
            );
        }
        for error in &result.result.errors {
            let key = error.key.clone().unwrap_or_default();
            out.error(
                format!(
                    "delete s3://{b}/{key}: {} ({})",
                    error.message.as_deref().unwrap_or("refused"),
                    error.code.as_deref().unwrap_or("?")
                ),
                json!({"operation": "delete", "bucket": b, "key": key, "code": error.code}),
            );
        }
    }
    Ok(())
}

fn parse_range(text: &str) -> Result<ByteRange> {
    let text = text.trim_start_matches("bytes=");
    let (first, last) = text
        .split_once('-')
        .ok_or_else(|| usage(format!("--range {text}: expected FIRST-LAST")))?;
    let first: u64 = first
        .parse()
        .map_err(|_| usage(format!("--range {text}: bad first byte")))?;
    let last: u64 = last
        .parse()
        .map_err(|_| usage(format!("--range {text}: bad last byte")))?;
    ByteRange::new(first, last).map_err(|e| usage(format!("--range {text}: {e}")))
}

async fn cat(client: &Client, path: &str, range: Option<&str>) -> Result<()> {
    let (bn, kn, b, k) = object_key(path)?;
    let mut request = GetObject::new(bn, kn);
    if let Some(range) = range {
        request = request.range(parse_range(range)?);
    }
    let object = client
        .get_object(request)
        .await
        .map_err(|e| failure_of(&format!("read s3://{b}/{k}"), &b, &e))?;
    let mut stdout = tokio::io::stdout();
    object
        .body
        .write_to(&mut stdout)
        .await
        .map_err(|e| failure_of(&format!("stream s3://{b}/{k}"), &b, &e))?;
    stdout
        .flush()
        .await
        .map_err(|e| Failure::new(format!("write stdout: {e}")))?;
    Ok(())
}

async fn stat(client: &Client, out: &Out, path: &str) -> Result<()> {
    let (bn, kn, b, k) = object_key(path)?;
    let head = client
        .head_object(HeadObject::new(bn, kn).checksum_mode(true))
        .await
        .map_err(|e| failure_of(&format!("stat s3://{b}/{k}"), &b, &e))?;
    let mut checksums = head
        .checksums
        .values
        .iter()
        .map(|(algorithm, value)| format!("{}={value}", algorithm.as_str()))
        .collect::<Vec<_>>()
        .join(" ");
    let checksum_type = head.checksums.checksum_type.map(|t| t.as_str());
    if let Some(kind) = checksum_type {
        checksums.push_str(&format!(" ({kind})"));
    }
    let checksum_values: serde_json::Map<String, Value> = head
        .checksums
        .values
        .iter()
        .map(|(algorithm, value)| (algorithm.as_str().to_owned(), json!(value)))
        .collect();
    let etag = head.etag.as_ref().map(|e| e.as_str().to_owned());
    let value = json!({
        "bucket": b, "key": k, "size": head.content_length, "etag": etag,
        "content_type": head.content_type, "parts": head.parts_count,
        "storage_class": head.storage_class.as_ref().map(|c| c.as_str().to_owned()),
        "metadata": head.metadata, "checksums": checksum_values,
        "checksum_type": checksum_type,
    });
    let mut text = format!(
        "Name      : s3://{b}/{k}\nSize      : {}\nETag      : {}\nType      : {}\nParts     : {}\nChecksums : {checksums}",
        head.content_length
            .map(|s| s.to_string())
            .unwrap_or_default(),
        etag.unwrap_or_default(),
        head.content_type.clone().unwrap_or_default(),
        head.parts_count
            .map(|p| p.to_string())
            .unwrap_or_else(|| "1".into()),
    );
    for (name, v) in &head.metadata {
        text.push_str(&format!("\nMetadata  : {name}={v}"));
    }
    out.line(text, value);
    Ok(())
}

/// `--exclude` / `--include` globs over relative paths.
#[derive(Debug, Default)]
struct Filter {
    exclude: Vec<String>,
    include: Vec<String>,
}

impl Filter {
    fn keeps(&self, relative: &str) -> bool {
        !self.exclude.iter().any(|g| wildcard_match(g, relative))
            || self.include.iter().any(|g| wildcard_match(g, relative))
    }
}

/// One side of a sync: relative path → (size, modified).
type Side = std::collections::BTreeMap<String, (u64, Option<std::time::SystemTime>)>;

async fn side(client: &Client, location: &Location) -> Result<Side> {
    Ok(match location {
        Location::Local(root) => {
            if !root.exists() {
                return Ok(Side::new());
            }
            local_files(root)?
                .into_iter()
                .map(|(path, rel)| {
                    let meta = std::fs::metadata(&path).ok();
                    let size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
                    (rel, (size, meta.and_then(|m| m.modified().ok())))
                })
                .collect()
        }
        Location::S3 {
            bucket: b,
            key: prefix,
        } => {
            let prefix = if prefix.is_empty() || prefix.ends_with('/') {
                prefix.clone()
            } else {
                format!("{prefix}/")
            };
            list_all(client, b, &prefix, false)
                .await?
                .0
                .into_iter()
                .map(|o| (o.key[prefix.len()..].to_owned(), (o.size, o.modified)))
                .collect()
        }
    })
}

fn target(location: &Location, relative: &str) -> Location {
    match location {
        Location::Local(root) => Location::Local(root.join(relative)),
        Location::S3 { bucket: b, key } => Location::S3 {
            bucket: b.clone(),
            key: join_key(key, relative),
        },
    }
}

#[allow(clippy::too_many_arguments)]
async fn sync(
    cli: &Cli,
    client: &Client,
    out: &Out,
    source: &str,
    destination: &str,
    delete: bool,
    filter: &Filter,
    dryrun: bool,
    attrs: &AttrArgs,
) -> Result<()> {
    attributes(attrs, None)?;
    let (from, to) = (Location::parse(source), Location::parse(destination));
    if matches!((&from, &to), (Location::Local(_), Location::Local(_))) {
        return Err(usage("one side of sync must be s3://bucket/prefix"));
    }
    let (have, want) = (side(client, &from).await?, side(client, &to).await?);
    let mut jobs = Vec::new();
    for (rel, (size, modified)) in &have {
        if !filter.keeps(rel) {
            continue;
        }
        let differs = match want.get(rel) {
            None => true,
            Some((dest_size, _)) if dest_size != size => true,
            // `--checksum ALG`: the content decides, not the times.
            Some(_) if attrs.checksum.is_some() => {
                let algorithm = attrs.checksum.unwrap_or(ChecksumAlgorithm::Crc32);
                !same_content(client, &target(&from, rel), &target(&to, rel), algorithm).await
            }
            Some((dest_size, dest_modified)) => {
                dest_size != size
                    // Object times have whole seconds: a source newer by more than one
                    // second counts as changed.
                    || matches!((modified, dest_modified), (Some(s), Some(d))
                        if s.duration_since(*d).is_ok_and(|gap| gap > Duration::from_secs(1)))
            }
        };
        if differs {
            jobs.push(match (target(&from, rel), target(&to, rel)) {
                (Location::Local(p), Location::S3 { bucket: b, key: k }) => Job::Upload(p, b, k),
                (Location::S3 { bucket: b, key: k }, Location::Local(p)) => Job::Download(b, k, p),
                (
                    Location::S3 {
                        bucket: sb,
                        key: sk,
                    },
                    Location::S3 {
                        bucket: db,
                        key: dk,
                    },
                ) => Job::Copy(sb, sk, db, dk),
                _ => unreachable!("local to local refused above"),
            });
        }
    }
    let stale: Vec<&String> = if delete {
        want.keys()
            .filter(|rel| !have.contains_key(*rel) && filter.keeps(rel))
            .collect()
    } else {
        Vec::new()
    };
    if dryrun {
        for job in &jobs {
            out.line(
                format!("(dryrun) {}", describe_job(job)),
                json!({"dryrun": describe_job(job)}),
            );
        }
        for rel in &stale {
            out.line(
                format!("(dryrun) delete: {}", show(&target(&to, rel))),
                json!({"dryrun": format!("delete: {}", show(&target(&to, rel)))}),
            );
        }
        return Ok(());
    }
    run_jobs(cli, client, out, jobs, attrs, false).await?;
    for rel in stale {
        match target(&to, rel) {
            Location::Local(path) => match std::fs::remove_file(&path) {
                Ok(()) => out.line(
                    format!("delete: {}", path.display()),
                    json!({"operation": "delete", "path": path.display().to_string()}),
                ),
                Err(e) => out.error(
                    format!("delete {}: {e}", path.display()),
                    json!({"operation": "delete"}),
                ),
            },
            Location::S3 { bucket: b, key: k } => {
                let result = client
                    .delete_object(DeleteObject::new(bucket_name(&b)?, key_name(&k)?))
                    .await;
                match result {
                    Ok(_) => out.line(
                        format!("delete: s3://{b}/{k}"),
                        json!({"operation": "delete", "bucket": b, "key": k}),
                    ),
                    Err(e) => out.error(
                        failure_of(&format!("delete s3://{b}/{k}"), &b, &e),
                        json!({"operation": "delete", "bucket": b, "key": k}),
                    ),
                }
            }
        }
    }
    Ok(())
}

fn show(location: &Location) -> String {
    match location {
        Location::Local(p) => p.display().to_string(),
        Location::S3 { bucket: b, key: k } => format!("s3://{b}/{k}"),
    }
}

fn describe_job(job: &Job) -> String {
    match job {
        Job::Upload(p, b, k) => format!("upload: {} to s3://{b}/{k}", p.display()),
        Job::Download(b, k, p) => format!("download: s3://{b}/{k} to {}", p.display()),
        Job::Copy(sb, sk, db, dk) => format!("copy: s3://{sb}/{sk} to s3://{db}/{dk}"),
    }
}

/// Whether a local file and an object have the same content by the object's stored
/// full-object checksum of `algorithm` (HeadObject with checksum mode). No such checksum
/// (another algorithm, a composite one, none) counts as different: the file is copied.
async fn same_content(
    client: &Client,
    one: &Location,
    other: &Location,
    algorithm: ChecksumAlgorithm,
) -> bool {
    let (path, b, k) = match (one, other) {
        (Location::Local(p), Location::S3 { bucket, key })
        | (Location::S3 { bucket, key }, Location::Local(p)) => (p.clone(), bucket, key),
        _ => return false,
    };
    let (Ok(bn), Ok(kn)) = (bucket(b), key(k)) else {
        return false;
    };
    let Ok(head) = client
        .head_object(HeadObject::new(bn, kn).checksum_mode(true))
        .await
    else {
        return false;
    };
    if head.checksums.checksum_type == Some(s3_wire::ops::ChecksumType::Composite) {
        return false;
    }
    let Some(stored) = head
        .checksums
        .values
        .iter()
        .find(|(a, _)| *a == algorithm)
        .map(|(_, v)| v.clone())
    else {
        return false;
    };
    let local = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        use std::io::Read;
        let mut file = std::fs::File::open(&path)?;
        let mut summer = s3_wire::ops::Checksummer::new(algorithm);
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            summer.update(&buf[..n]);
        }
        Ok(summer.finish().to_base64())
    })
    .await;
    matches!(local, Ok(Ok(local)) if local == stored)
}
