//! The library behind the `s3w` binary: argument parsing ([`Cli`]), the commands, and
//! the one-line error reports. Built on the public API of `s3-wire` only.
//!
//! Modules: `cli` (the clap definitions), `location` (paths and `s3://` URLs), `filter`
//! (`--include`/`--exclude`), `listing` (`ls`, `du`, `uploads`), `remove` (`rm`), `copy`
//! (one object: files, stdin/stdout, objects; the attribute flags), `tree` (recursive
//! `cp`/`mv` and `sync`, on the library's directory transfers), `object` (`cat`, `stat`),
//! `progress` (the terminal display), `interrupt` (Ctrl-C), `report` (lines, JSON, errors).

mod acl;
mod bucket_config;
mod cli;
mod copy;
mod filter;
mod interrupt;
mod listing;
mod location;
mod object;
mod object_lock;
mod presign_post;
mod progress;
mod remove;
mod report;
mod restore;
mod tree;

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{CommandFactory, FromArgMatches};
use s3_wire::credentials::{Env, ProcessEnv};
use s3_wire::ops::{ChecksumAlgorithm, CreateBucket, DeleteBucket, GetObject, PutObject};
use s3_wire::{Client, ClientBuilder, UploadSource};
use serde_json::json;

use crate::cli::*;
use crate::copy::*;
use crate::filter::*;
use crate::listing::*;
use crate::location::*;
use crate::object::*;
use crate::remove::*;
use crate::report::*;
use crate::tree::*;

/// Runs the CLI with these arguments; returns the process exit code (0 ok, 1 failed,
/// 2 usage, 130 interrupted by SIGINT, 143 by SIGTERM).
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let matches = match Cli::command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(error) => {
            let code = error.exit_code();
            let _ = error.print();
            return code;
        }
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return 2;
        }
    };
    let filters = filter_order(&matches);
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
    runtime.block_on(run(cli, filters))
}

/// The `--include` / `--exclude` patterns of the command, in the order given (the AWS
/// CLI's rule: the last one that matches wins), as `(include, pattern)`.
fn filter_order(matches: &clap::ArgMatches) -> Vec<(bool, String)> {
    let Some((_, sub)) = matches.subcommand() else {
        return Vec::new();
    };
    let mut ordered = Vec::new();
    for (id, include) in [("exclude", false), ("include", true)] {
        let (Ok(Some(indices)), Ok(Some(values))) = (
            sub.try_get_raw_occurrences(id).map(|_| sub.indices_of(id)),
            sub.try_get_many::<String>(id),
        ) else {
            continue;
        };
        ordered.extend(indices.zip(values).map(|(at, v)| (at, include, v.clone())));
    }
    ordered.sort_by_key(|(at, _, _)| *at);
    ordered
        .into_iter()
        .map(|(_, include, v)| (include, v))
        .collect()
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
    if let Some(provider) = cli.provider {
        builder = builder.provider(provider);
    }
    if cli.list_objects_v1 {
        builder = builder.list_objects_v1(true);
    }
    if cli.no_sign_request {
        builder = builder.anonymous();
    }
    if cli.request_payer.is_some() {
        builder = builder.request_payer(true);
    }
    if let Some(bundle) = &cli.ca_bundle {
        builder = builder.ca_bundle(bundle.clone());
    }
    if cli.no_verify_ssl {
        eprintln!(
            "s3w: warning: --no-verify-ssl: TLS certificates are not checked; anyone on the \
             network path can read and change this traffic"
        );
        builder = builder.danger_accept_invalid_certificates(true);
    }
    builder = builder.transfer_options(upload_options(&cli.tuning));
    if let Some(memory) = cli.tuning.max_memory {
        builder = builder.transfer_memory(memory);
    }
    if let Some(limit) = cli.tuning.bwlimit {
        builder = builder.bandwidth_limit(limit);
    }
    builder.build().map_err(|e| {
        Failure::new(format!(
            "cannot configure the client: {}",
            one_line(&e.to_string())
        ))
    })
}

async fn run(cli: Cli, filters: Vec<(bool, String)>) -> i32 {
    use std::io::IsTerminal;
    interrupt::listen();
    let show_bars = !cli.no_progress && !cli.quiet && !cli.json && std::io::stderr().is_terminal();
    let out = Out {
        json: cli.json,
        quiet: cli.quiet,
        failed: Arc::new(AtomicBool::new(false)),
        bars: show_bars.then(|| {
            indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stderr())
        }),
    };
    let result = match Filter::new(filters.iter().map(|(i, p)| (*i, p.as_str()))) {
        Ok(filter) => match local_work(&cli) {
            Some(result) => result,
            None => match check_local_paths(&cli) {
                Err(failure) => Err(failure),
                Ok(()) => match client(&cli).await {
                    Ok(client) => {
                        let interrupted = Err(Failure::new("interrupted"));
                        interrupt::run(dispatch(&cli, &client, &out, &filter), interrupted).await
                    }
                    Err(failure) => Err(failure),
                },
            },
        },
        Err(failure) => Err(failure),
    };
    if interrupt::requested() {
        // What the cancelled transfer cleaned up (each object of many said it already).
        if let Err(failure) = &result
            && failure.message != "interrupted"
        {
            eprintln!("s3w: {failure}");
        }
        return interrupt::exit_code();
    }
    match result {
        Err(failure) => {
            if cli.json {
                println!("{}", error_value(&failure, json!({})));
            }
            eprintln!("s3w: {failure}");
            match failure.exit_code {
                Some(code) => code,
                None if failure.message.starts_with(USAGE) => 2,
                None => 1,
            }
        }
        Ok(()) if out.failed.load(Ordering::SeqCst) => 1,
        Ok(()) => 0,
    }
}

/// Commands that need no store: completions and the man page.
fn local_work(cli: &Cli) -> Option<Result<()>> {
    let mut command = Cli::command();
    match &cli.command {
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut command, "s3w", &mut script);
            Some(write_stdout(&script, "the completion script"))
        }
        Command::Man => {
            let mut page = Vec::new();
            Some(
                clap_mangen::Man::new(command)
                    .render(&mut page)
                    .map_err(|e| Failure::new(format!("render the man page: {e}")))
                    .and_then(|()| write_stdout(&page, "the man page")),
            )
        }
        _ => None,
    }
}

fn write_stdout(bytes: &[u8], what: &str) -> Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::new(format!("write {what}: {e}")))
}

/// A local source that does not exist is a usage error (exit 2) before anything is sent.
fn check_local_paths(cli: &Cli) -> Result<()> {
    let source = match &cli.command {
        Command::Cp(args) | Command::Mv(args) => &args.source,
        Command::Sync { source, .. } => source,
        _ => return Ok(()),
    };
    match Location::parse(source) {
        Location::Local(path) if path.as_os_str() != "-" && !path.exists() => {
            let mut failure =
                Failure::new(format!("{}: No such file or directory", path.display()));
            failure.exit_code = Some(2);
            Err(failure)
        }
        _ => Ok(()),
    }
}

async fn dispatch(cli: &Cli, client: &Client, out: &Out, filter: &Filter) -> Result<()> {
    match &cli.command {
        Command::Ls {
            path,
            recursive,
            human_readable,
            summarize,
            versions,
        } => {
            ls(
                client,
                out,
                path.as_deref(),
                *recursive,
                *human_readable,
                *summarize,
                *versions,
            )
            .await
        }
        Command::Cp(args) => cp(cli, client, out, args, filter, false).await,
        Command::Mv(args) => cp(cli, client, out, args, filter, true).await,
        Command::Rm {
            path,
            recursive,
            dryrun,
            version_id,
            bypass_governance_retention,
            filters: _,
        } => {
            let removal = Removal {
                recursive: *recursive,
                dryrun: *dryrun,
                version_id: version_id.as_deref(),
                bypass_governance_retention: *bypass_governance_retention,
            };
            rm(client, out, path, &removal, filter).await
        }
        Command::Mb {
            bucket: name,
            object_lock_enabled_for_bucket,
        } => {
            let (b, _) = s3_location(name)?;
            client
                .create_bucket(
                    CreateBucket::new(bucket_name(&b)?)
                        .object_lock_enabled(*object_lock_enabled_for_bucket),
                )
                .await
                .map_err(|e| failure_of(&format!("make bucket `{b}`"), &b, &e))?;
            out.line(
                format!("make_bucket: {b}"),
                json!({"type": "bucket", "bucket": b, "result": "created"}),
            );
            Ok(())
        }
        Command::Rb {
            bucket: name,
            force,
        } => {
            let (b, _) = s3_location(name)?;
            if *force {
                let everything = Removal {
                    recursive: true,
                    dryrun: false,
                    version_id: None,
                    bypass_governance_retention: false,
                };
                rm(
                    client,
                    out,
                    &format!("s3://{b}/"),
                    &everything,
                    &Filter::default(),
                )
                .await?;
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
                json!({"type": "bucket", "bucket": b, "result": "removed"}),
            );
            Ok(())
        }
        Command::Sync {
            source,
            destination,
            delete,
            dryrun,
            size_only,
            exact_timestamps,
            no_clobber,
            filters: _,
            links,
            attrs,
        } => {
            tree(
                cli,
                client,
                out,
                Tree {
                    source,
                    destination,
                    filter: filter.clone(),
                    compare: compare(*size_only, *exact_timestamps, *no_clobber, attrs),
                    delete: *delete,
                    dryrun: *dryrun,
                    move_source: false,
                    attrs,
                    links: *links,
                },
            )
            .await
        }
        Command::Du {
            path,
            human_readable,
        } => du(client, out, path, *human_readable).await,
        Command::Uploads { path } => uploads(client, out, path).await,
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
                    json!({"type": "result", "operation": "abort", "bucket": b, "key": upload.key, "upload_id": upload.upload_id}),
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
                json!({"type": "summary", "aborted": swept.aborted.len(), "kept": swept.kept, "failed": swept.failed.len()}),
            );
            Ok(())
        }
        Command::Cat {
            path,
            range,
            version_id,
        } => cat(client, path, range.as_deref(), version_id.as_deref()).await,
        Command::Put { path, attrs } => {
            check_upload(attrs)?;
            let (bn, kn, b, k) = object_key(path)?;
            let started = Instant::now();
            let upload = client
                .upload(bn, kn, UploadSource::reader(tokio::io::stdin(), None))
                .attributes(attributes(attrs, None)?)
                .checksum(attrs.checksum.or(Some(ChecksumAlgorithm::Crc32)));
            let stored = interrupt::cancellable(upload.start())
                .await
                .map_err(|e| failure_of(&format!("upload to s3://{b}/{k}"), &b, &e))?;
            let (text, value) = result_line(
                "upload",
                "-",
                &format!("s3://{b}/{k}"),
                started,
                json!({"bucket": b, "key": k, "size": stored.size,
                       "etag": stored.etag.as_ref().map(|e| e.as_str().to_owned()),
                       "verification": stored.verification.to_string()}),
            );
            out.line(text, value);
            Ok(())
        }
        Command::Stat { path, version_id } => stat(client, out, path, version_id.as_deref()).await,
        Command::Attributes { path, version_id } => {
            object_attributes(client, out, path, version_id.as_deref()).await
        }
        Command::Presign {
            path,
            expires_in,
            method,
            post,
        } => {
            if post.post {
                return presign_post::presign_post(client, out, path, *expires_in, post).await;
            }
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
                json!({"type": "url", "url": signed.url(), "expires_in": expires_in}),
            );
            Ok(())
        }
        Command::Versioning(args) => bucket_config::versioning(client, out, args).await,
        Command::Lifecycle(args) => {
            bucket_config::configuration(client, out, bucket_config::ConfigKind::Lifecycle, args)
                .await
        }
        Command::Policy(args) => {
            bucket_config::configuration(client, out, bucket_config::ConfigKind::Policy, args).await
        }
        Command::Cors(args) => {
            bucket_config::configuration(client, out, bucket_config::ConfigKind::Cors, args).await
        }
        Command::Encryption(args) => {
            bucket_config::configuration(client, out, bucket_config::ConfigKind::Encryption, args)
                .await
        }
        Command::Tagging(args) => {
            bucket_config::configuration(client, out, bucket_config::ConfigKind::Tagging, args)
                .await
        }
        Command::PublicAccessBlock(args) => {
            let kind = bucket_config::ConfigKind::PublicAccessBlock;
            bucket_config::configuration(client, out, kind, args).await
        }
        Command::ObjectLock(args) => {
            object_lock::object_lock_configuration(client, out, args).await
        }
        Command::Retention(args) => object_lock::retention(client, out, args).await,
        Command::LegalHold(args) => object_lock::legal_hold(client, out, args).await,
        Command::Restore(args) => restore::restore(client, out, args).await,
        Command::Acl(args) => acl::acl(client, out, args).await,
        Command::Completions { .. } | Command::Man => Ok(()),
    }
}

/// `cp` / `mv`: one object, or (recursive, a wildcard) many.
async fn cp(
    cli: &Cli,
    client: &Client,
    out: &Out,
    args: &CopyArgs,
    filter: &Filter,
    delete_source: bool,
) -> Result<()> {
    let (from, to) = (
        Location::parse(&args.source),
        Location::parse(&args.destination),
    );
    let wildcard = matches!(&from, Location::S3 { key, .. } if has_wildcard(key));
    let local_file = matches!(&from, Location::Local(path) if path.is_file());
    if (args.recursive && !local_file) || wildcard {
        return tree(
            cli,
            client,
            out,
            copy_tree(args, filter.clone(), delete_source),
        )
        .await;
    }
    if let Location::Local(path) = &from
        && path.is_dir()
    {
        return Err(usage(format!(
            "{} is a directory: use --recursive",
            path.display()
        )));
    }
    copy_one(cli, client, out, args, from, to, delete_source).await
}
