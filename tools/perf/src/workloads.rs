//! The workloads of a run and their sizes: the built-in ones, then one `tasks` workload per
//! file of `tools/perf/workloads/` (AWS's S3 benchmark format, see `perf_peer::tasks`;
//! `--tiny` reads `tools/perf/workloads/tiny/` instead).

use std::path::{Path, PathBuf};

use perf_peer::tasks::TaskSet;

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
    /// The directory (under `tools/perf/`) of the task workload files.
    pub task_dir: &'static str,
}

impl Sizes {
    pub const REAL: Sizes = Sizes {
        single: 64 * MIB,
        multipart: [256 * MIB, GIB],
        download: GIB,
        small_count: 1000,
        small_size: 4096,
        list_keys: 10_000,
        task_dir: "workloads",
    };
    pub const TINY: Sizes = Sizes {
        single: MIB,
        multipart: [12 * MIB, 20 * MIB],
        download: 20 * MIB,
        small_count: 40,
        small_size: 4096,
        list_keys: 1500,
        task_dir: "workloads/tiny",
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
    /// `tasks`: the workload file.
    pub tasks: Option<PathBuf>,
}

/// Task transfers in flight at once in a `tasks` workload: the peers' own default.
pub const TASK_CONCURRENCY: usize = perf_peer::tasks::CONCURRENCY;

impl Workload {
    /// The parsed workload file of a `tasks` workload.
    pub fn task_set(&self) -> Result<TaskSet, String> {
        let path = self.tasks.as_deref().ok_or("not a tasks workload")?;
        TaskSet::read(path)
    }
}

pub fn workloads(sizes: Sizes) -> Result<Vec<Workload>, String> {
    let w = |name: String, kind, size, part_size, concurrency, count| Workload {
        name,
        kind,
        size,
        part_size,
        concurrency,
        count,
        tasks: None,
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
    for file in task_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(sizes.task_dir))? {
        let set = TaskSet::read(&file)?;
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".run.json"))
            .ok_or_else(|| format!("{}: not a .run.json file", file.display()))?;
        list.push(Workload {
            tasks: Some(file.clone()),
            ..w(
                format!("tasks:{name}"),
                "tasks",
                set.bytes(),
                0,
                TASK_CONCURRENCY,
                set.tasks.len(),
            )
        });
    }
    Ok(list)
}

/// The `*.run.json` files of `dir`, by name.
fn task_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.to_str().is_some_and(|p| p.ends_with(".run.json")) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The task workload files this repository carries, as `(path under tools/perf, text)`:
/// scaled-down versions of AWS's benchmarks for a 2-core, 24 GiB machine (10,000 objects
/// of 256 KiB from and to disk or memory, 1 GiB from and to disk, a deterministic
/// mixed-size set like their Caltech256 shards) and one tiny file for the smoke run.
/// `perf write-workloads` writes them; a test checks the committed files are these.
pub fn task_files_of_repository() -> Vec<(String, String)> {
    let many = |action: &str, on_disk: bool, size: u64, count: usize| {
        let tasks: Vec<_> = (1..=count)
            .map(|i| (action, format!("{action}/{}/{i}", human(size)), size))
            .collect();
        run_json(on_disk, 10, 600, &tasks)
    };
    let mut files = Vec::new();
    for action in ["upload", "download"] {
        files.push((
            format!("workloads/{action}-256KiB-10_000x.run.json"),
            many(action, true, 256 * 1024, 10_000),
        ));
        files.push((
            format!("workloads/{action}-256KiB-10_000x-ram.run.json"),
            many(action, false, 256 * 1024, 10_000),
        ));
        files.push((
            format!("workloads/{action}-1GiB-1x.run.json"),
            many(action, true, GIB, 1),
        ));
    }
    // 300 downloads from 16 KiB to 16 MiB, log-uniform by a fixed LCG (about 0.7 GiB).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mixed: Vec<_> = (1..=300)
        .map(|i| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            let size = (16.0 * 1024.0 * 1024f64.powf(unit)) as u64;
            ("download", format!("mixed/{i:03}"), size)
        })
        .collect();
    files.push((
        "workloads/mixed-300x.run.json".into(),
        run_json(true, 10, 600, &mixed),
    ));
    // The smoke run's: uploads and downloads of assorted sizes, one above 8 MiB (a
    // multipart upload and a ranged download for every client), from and to disk.
    let tiny: Vec<_> = [1, 4096, 256 * 1024, 3 * MIB, 9 * MIB]
        .into_iter()
        .enumerate()
        .flat_map(|(i, size)| {
            ["upload", "download"].map(|action| (action, format!("{action}/tiny/{i}"), size))
        })
        .collect();
    files.push((
        "workloads/tiny/mixed-tiny.run.json".into(),
        run_json(true, 1, 60, &tiny),
    ));
    files
}

/// A version-2 workload file, one task a line.
fn run_json(on_disk: bool, repeat: u32, secs: u32, tasks: &[(&str, String, u64)]) -> String {
    let lines: Vec<String> = tasks
        .iter()
        .map(|(action, key, size)| {
            format!("    {{\"action\": \"{action}\", \"key\": \"{key}\", \"size\": {size}}}")
        })
        .collect();
    format!(
        "{{\n  \"version\": 2,\n  \"comment\": \"written by perf write-workloads (tools/perf/src/workloads.rs)\",\n  \"filesOnDisk\": {on_disk},\n  \"checksum\": null,\n  \"maxRepeatCount\": {repeat},\n  \"maxRepeatSecs\": {secs},\n  \"tasks\": [\n{}\n  ]\n}}\n",
        lines.join(",\n")
    )
}

/// `perf write-workloads`: (re)writes [`task_files_of_repository`] under `tools/perf/`.
pub fn write_repository_files() -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, text) in task_files_of_repository() {
        let path = root.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
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
        let names: Vec<String> = workloads(Sizes::REAL)
            .unwrap()
            .into_iter()
            .map(|w| w.name)
            .collect();
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
                "construct",
                "tasks:download-1GiB-1x",
                "tasks:download-256KiB-10_000x-ram",
                "tasks:download-256KiB-10_000x",
                "tasks:mixed-300x",
                "tasks:upload-1GiB-1x",
                "tasks:upload-256KiB-10_000x-ram",
                "tasks:upload-256KiB-10_000x",
            ]
        );
        for (path, text) in task_files_of_repository() {
            let committed =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&path));
            assert!(
                committed.ok().as_deref() == Some(text.as_str()),
                "{path} is not what `perf write-workloads` writes"
            );
            TaskSet::parse(&text).unwrap();
        }
        let tiny = workloads(Sizes::TINY).unwrap();
        let tasks: Vec<_> = tiny.iter().filter(|w| w.kind == "tasks").collect();
        assert_eq!(tasks.len(), 1);
        let set = tasks[0].task_set().unwrap();
        assert_eq!(tasks[0].size, set.bytes());
        assert_eq!(tasks[0].count, set.tasks.len());
    }
}
