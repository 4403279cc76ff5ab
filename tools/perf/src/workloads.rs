//! The workloads of a run and their sizes.

use crate::{GIB, MIB};

/// Sizes of one run: the real ones or `--tiny` for the smoke test.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub single: u64,
    pub multipart: [u64; 2],
    pub download: u64,
    pub small_count: usize,
    pub small_size: u64,
    pub list_keys: usize,
}

impl Sizes {
    pub const REAL: Sizes = Sizes {
        single: 64 * MIB,
        multipart: [256 * MIB, GIB],
        download: GIB,
        small_count: 1000,
        small_size: 4096,
        list_keys: 10_000,
    };
    pub const TINY: Sizes = Sizes {
        single: MIB,
        multipart: [12 * MIB, 20 * MIB],
        download: 20 * MIB,
        small_count: 40,
        small_size: 4096,
        list_keys: 1500,
    };
}

/// One workload as the children see it: a name and its argument size.
#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub kind: &'static str,
    pub size: u64,
    pub part_size: u64,
    pub concurrency: usize,
    pub count: usize,
}

pub fn workloads(sizes: Sizes) -> Vec<Workload> {
    let w = |name: String, kind, size, part_size, concurrency, count| Workload {
        name,
        kind,
        size,
        part_size,
        concurrency,
        count,
    };
    let mut list = vec![
        w(
            format!("put-{}", human(sizes.single)),
            "put",
            sizes.single,
            0,
            0,
            0,
        ),
        w(
            format!("get-{}", human(sizes.single)),
            "get",
            sizes.single,
            0,
            0,
            0,
        ),
    ];
    for size in sizes.multipart {
        list.push(w(
            format!("upload-{}-8MiBx4", human(size)),
            "upload",
            size,
            8 * MIB,
            4,
            0,
        ));
        list.push(w(
            format!("upload-{}-defaults", human(size)),
            "upload",
            size,
            0,
            0,
            0,
        ));
    }
    list.push(w(
        format!("download-{}", human(sizes.download)),
        "download",
        sizes.download,
        0,
        0,
        0,
    ));
    list.push(w(
        format!("small-{}x{}", sizes.small_count, human(sizes.small_size)),
        "small",
        sizes.small_size,
        0,
        32,
        sizes.small_count,
    ));
    list.push(w(
        format!("list-{}", sizes.list_keys),
        "list",
        0,
        0,
        0,
        sizes.list_keys,
    ));
    list.push(w("construct".into(), "construct", 0, 0, 0, 0));
    list
}

pub fn human(bytes: u64) -> String {
    if bytes >= GIB && bytes.is_multiple_of(GIB) {
        format!("{}GiB", bytes / GIB)
    } else if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{}MiB", bytes / MIB)
    } else {
        format!("{}KiB", bytes / 1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_names() {
        let names: Vec<String> = workloads(Sizes::REAL).into_iter().map(|w| w.name).collect();
        assert_eq!(
            names,
            [
                "put-64MiB",
                "get-64MiB",
                "upload-256MiB-8MiBx4",
                "upload-256MiB-defaults",
                "upload-1GiB-8MiBx4",
                "upload-1GiB-defaults",
                "download-1GiB",
                "small-1000x4KiB",
                "list-10000",
                "construct"
            ]
        );
    }
}
