//! Measurements that need a real store and write their figures into `measurements/`; each
//! runs only when its variable is set (they take minutes, and their figures are only worth
//! keeping from a release build):
//!
//! ```sh
//! S3W_MEASURE_MOTO_DOWNLOAD=1 cargo test --release -p s3-wire-tokio --test transfers \
//!     measure::a_1_gib_download_from_moto -- --nocapture
//! ```

use std::time::Instant;

use s3_wire_tokio::s3_ops::Provider;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::{UploadSource, bucket, key};

use crate::helpers::{load_average, measurement_context, write_measurement};

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// The variable that runs [`a_1_gib_download_from_moto`].
const MOTO_DOWNLOAD_VAR: &str = "S3W_MEASURE_MOTO_DOWNLOAD";

/// A managed download of 1 GiB from moto (which builds every ranged answer from the whole
/// object) with fixed 8 MiB ranges (the range size before it adapted), with ranges adapting
/// from 8 MiB, and with fixed 128 MiB ranges, alternately, two rounds; the figures go into
/// `measurements/download-range-size-moto.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gib_download_from_moto() {
    if std::env::var_os(MOTO_DOWNLOAD_VAR).is_none() {
        return;
    }
    let moto = crate::support::moto::moto().await;
    let client = s3_wire_tokio::Client::builder()
        .endpoint(moto.endpoint())
        .region(crate::support::moto::REGION)
        .static_credentials(
            crate::support::moto::ACCESS_KEY,
            crate::support::moto::SECRET_KEY,
            None,
        )
        .provider(Provider::Moto)
        .build()
        .unwrap();
    let name = bucket("measure").unwrap();
    client.send(CreateBucket::new(name.clone())).await.unwrap();
    let scratch = tempfile::tempdir_in("/dev/shm").unwrap();
    let source = scratch.path().join("source");
    {
        use std::io::Write as _;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&source).unwrap());
        let block = crate::support::data(MIB, 1);
        for _ in 0..GIB / MIB {
            file.write_all(&block).unwrap();
        }
        file.flush().unwrap();
    }
    let object = key("one-gib").unwrap();
    client
        .upload(name.clone(), object.clone(), UploadSource::file(&source))
        .await
        .unwrap();
    std::fs::remove_file(&source).unwrap();

    let load_before = load_average();
    let configurations: [(&str, u64, bool); 3] = [
        ("8 MiB ranges, fixed (before)", 8 * MIB, false),
        ("8 MiB ranges, adapting (after)", 8 * MIB, true),
        ("128 MiB ranges, fixed", 128 * MIB, false),
    ];
    let mut rows = Vec::new();
    for round in 1..=2 {
        for (label, part_size, adapt) in configurations {
            let target = scratch.path().join("target");
            let started = Instant::now();
            let got = client
                .download(name.clone(), object.clone(), target.as_path())
                .part_size(part_size)
                .adapt_range_size(adapt)
                .await
                .unwrap_or_else(|e| panic!("{label}: {e}\n{}", moto.log_text()));
            let seconds = started.elapsed().as_secs_f64();
            assert_eq!(got.size, GIB);
            std::fs::remove_file(&target).unwrap();
            println!(
                "round {round}, {label}: {seconds:.1} s, {} GETs",
                got.requests
            );
            rows.push((round, label, seconds, got.requests));
        }
    }
    let load_after = load_average();

    let mean = |label: &str| {
        let mut times: Vec<f64> = rows
            .iter()
            .filter(|row| row.1 == label)
            .map(|row| row.2)
            .collect();
        times.sort_by(f64::total_cmp);
        (times[0] + times[times.len() - 1]) / 2.0
    };
    let mut out = String::new();
    out.push_str("# A 1 GiB managed download from moto: fixed and adapting range sizes\n\n");
    out.push_str(&format!(
        "Written by `tests/transfers/measure.rs` {}, shared with other sessions; load \
         average {load_before} before and {load_after} after; moto 5.2.5 in server mode on \
         127.0.0.1 (`tests/interop/requirements.txt`), the client with the moto provider \
         profile, the object uploaded by the managed upload (8 MiB parts, composite CRC32: \
         its part probe is refused, so the download goes by ranges), downloaded to a file on \
         tmpfs.\n\n",
        measurement_context(),
    ));
    out.push_str("```sh\n");
    out.push_str(&format!(
        "{MOTO_DOWNLOAD_VAR}=1 cargo test --release -p s3-wire-tokio --test transfers \\\n    \
         measure::a_1_gib_download_from_moto -- --nocapture\n"
    ));
    out.push_str("```\n\n");
    out.push_str("| round | ranges | seconds | GETs |\n|---:|---|---:|---:|\n");
    for (round, label, seconds, requests) in &rows {
        out.push_str(&format!(
            "| {round} | {label} | {seconds:.1} | {requests} |\n"
        ));
    }
    let (before, after, fixed) = (
        mean(configurations[0].0),
        mean(configurations[1].0),
        mean(configurations[2].0),
    );
    out.push_str(&format!(
        "\nMean of the two rounds: fixed 8 MiB {before:.1} s, adapting {after:.1} s \
         ({:.1}× faster), fixed 128 MiB {fixed:.1} s.\n",
        before / after
    ));
    write_measurement("download-range-size-moto.md", &out);
}
