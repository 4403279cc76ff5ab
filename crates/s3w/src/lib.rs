//! The library behind the `s3w` binary: argument parsing ([`Cli`]), the commands, and
//! the one-line error reports. Built on the public API of `s3-wire` only.

mod acl;
mod bucket_config;
mod cli;
mod copy;
mod filter;
mod listing;
mod location;
mod object;
mod object_lock;
mod presign_post;
mod remove;
mod report;
mod restore;
mod sync;

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
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
use crate::sync::*;

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
            let (b, key) = s3_location(path)?;
            let (objects, _) = list_all(client, &b, &directory_prefix(&key), false).await?;
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
                json!({"url": signed.url(), "expires_in": expires_in}),
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
        Command::Retention(args) => object_lock::retention(client, out, args).await,
        Command::LegalHold(args) => object_lock::legal_hold(client, out, args).await,
        Command::Restore(args) => restore::restore(client, out, args).await,
        Command::Acl(args) => acl::acl(client, out, args).await,
    }
}
