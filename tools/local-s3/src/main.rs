//! `local-s3`: serve the embedded S3-compatible server for manual use and the
//! perf harness.
//!
//! ```text
//! cargo run -p local-s3 -- [--port 9000] [--data-dir DIR] [--access-key K] [--secret-key S]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use local_s3::{LocalS3, Options};

const USAGE: &str =
    "usage: local-s3 [--port PORT] [--data-dir DIR] [--access-key KEY] [--secret-key SECRET]
  --port        port on 127.0.0.1 (default 0: any free port)
  --data-dir    where objects are stored (default: a temporary directory removed on exit)
  --access-key  access key id clients must sign with
  --secret-key  secret key clients must sign with";

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = args.peekable();
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--port" => {
                options.port = value
                    .parse()
                    .map_err(|_| format!("--port: {value:?} is not a port number"))?;
            }
            "--data-dir" => options.data_dir = Some(PathBuf::from(value)),
            "--access-key" => options.access_key = value,
            "--secret-key" => options.secret_key = value,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("local-s3: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match LocalS3::start_with(options) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("local-s3: cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("local-s3 listening");
    println!("AWS_ENDPOINT_URL={}", server.endpoint());
    println!("AWS_ACCESS_KEY_ID={}", server.access_key());
    println!("AWS_SECRET_ACCESS_KEY={}", server.secret_key());
    println!("AWS_REGION={}", server.region());
    println!("data dir: {}", server.data_dir().display());
    println!("press Ctrl-C to stop");

    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("local-s3: cannot wait for Ctrl-C: {err}");
            return ExitCode::FAILURE;
        }
    };
    let signal = runtime.block_on(tokio::signal::ctrl_c());
    server.stop();
    match signal {
        Ok(()) => {
            println!("local-s3 stopped");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("local-s3: signal handling failed: {err}");
            ExitCode::FAILURE
        }
    }
}
