//! Checksum throughput: `cargo bench -p s3-ops --bench checksums`.
//!
//! Every algorithm over the same 1 MiB buffer, fed in 64 KiB pieces as a transport would.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use s3_ops::{ChecksumAlgorithm, Checksummer, ContentMd5};

const LEN: usize = 1 << 20;
const PIECE: usize = 64 << 10;

fn checksums(c: &mut Criterion) {
    let data: Vec<u8> = (0..LEN).map(|i| (i * 131 % 251) as u8).collect();
    let mut group = c.benchmark_group("checksum_1MiB");
    group.throughput(Throughput::Bytes(LEN as u64));
    for algorithm in [
        ChecksumAlgorithm::Crc32,
        ChecksumAlgorithm::Crc32c,
        ChecksumAlgorithm::Crc64Nvme,
        ChecksumAlgorithm::Sha1,
        ChecksumAlgorithm::Sha256,
    ] {
        group.bench_function(algorithm.as_str(), |b| {
            b.iter(|| {
                let mut checksummer = Checksummer::new(algorithm);
                for piece in data.chunks(PIECE) {
                    checksummer.update(piece);
                }
                checksummer.finish()
            })
        });
    }
    group.bench_function("MD5", |b| {
        b.iter(|| {
            let mut md5 = ContentMd5::new();
            for piece in data.chunks(PIECE) {
                md5.update(piece);
            }
            md5.finish()
        })
    });
    group.finish();
}

criterion_group!(benches, checksums);
criterion_main!(benches);
