//! The `tasks` workload: a workload file in the format of AWS's S3 benchmarks
//! (awslabs/aws-crt-s3-benchmarks, `*.run.json`, version 2), which AWS runs against its
//! CRT, SDK and CLI clients:
//!
//! ```json
//! {"version": 2, "comment": "...", "filesOnDisk": true, "checksum": null,
//!  "maxRepeatCount": 10, "maxRepeatSecs": 600,
//!  "tasks": [{"action": "upload", "key": "upload/256KiB/1", "size": 262144}, ...]}
//! ```
//!
//! A peer runs every task, [`Args::concurrency`] at a time ([`CONCURRENCY`] when the flag is
//! not given, as the harness runs them), each task one managed transfer of the client (which
//! may itself split a large object into parts). With `filesOnDisk`, an upload reads
//! `DIR/<key>` and a download writes it (`DIR` is `--file`); otherwise an upload sends bytes
//! from memory and a download counts the bytes it receives. The harness repeats the file
//! (one process per repetition) up to `maxRepeatCount` times and stops early once
//! `maxRepeatSecs` have passed. `checksum`
//! names the checksum algorithm uploads send (`CRC32`, `CRC32C`, `SHA1`, `SHA256`) or is
//! `null` for the client's default; the peers send their client's default only, so a
//! file that names one is reported as unsupported (every file of `tools/perf/workloads/`
//! says `null`).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use serde_json::Value;

use crate::{Args, Outcome, Stopwatch};

/// Task transfers in flight at once unless `--concurrency` says otherwise (each may be a
/// multipart upload or a ranged download of its own): enough to keep two cores busy with
/// 256 KiB objects. The harness's setting too.
pub const CONCURRENCY: usize = 64;

/// The format version this module reads.
pub const VERSION: u64 = 2;

/// What a task does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send `size` bytes to `key`.
    Upload,
    /// Read `key`, which holds `size` bytes.
    Download,
}

/// One task of a workload file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Upload or download.
    pub action: Action,
    /// The object key.
    pub key: String,
    /// The object's bytes.
    pub size: u64,
}

/// A parsed workload file.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TaskSet {
    /// Uploads read, and downloads write, files on disk (otherwise memory).
    pub files_on_disk: bool,
    /// The checksum algorithm uploads send; `None` for the client's default.
    pub checksum: Option<String>,
    /// Runs of the whole file at most.
    pub max_repeat_count: u64,
    /// Seconds after which no further run starts.
    pub max_repeat_secs: f64,
    /// The tasks, in file order.
    pub tasks: Vec<Task>,
}

impl TaskSet {
    /// Reads and parses the workload file at `path`.
    pub fn read(path: &std::path::Path) -> Result<TaskSet, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        TaskSet::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a workload file's text.
    pub fn parse(text: &str) -> Result<TaskSet, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let version = doc["version"].as_u64();
        if version != Some(VERSION) {
            return Err(format!("version {}: expected {VERSION}", doc["version"]));
        }
        let field = |name: &str| {
            let value = &doc[name];
            (!value.is_null())
                .then_some(value)
                .ok_or_else(|| format!("no {name}"))
        };
        let files_on_disk = field("filesOnDisk")?
            .as_bool()
            .ok_or("filesOnDisk: not a boolean")?;
        let checksum = match &doc["checksum"] {
            Value::Null => None,
            Value::String(name) => Some(name.clone()),
            other => return Err(format!("checksum: {other} is not null or a string")),
        };
        let max_repeat_count = field("maxRepeatCount")?
            .as_u64()
            .filter(|&n| n > 0)
            .ok_or("maxRepeatCount: not a positive integer")?;
        let max_repeat_secs = field("maxRepeatSecs")?
            .as_f64()
            .filter(|&s| s > 0.0)
            .ok_or("maxRepeatSecs: not a positive number")?;
        let tasks = field("tasks")?
            .as_array()
            .ok_or("tasks: not an array")?
            .iter()
            .enumerate()
            .map(|(i, task)| {
                let action = match task["action"].as_str() {
                    Some("upload") => Action::Upload,
                    Some("download") => Action::Download,
                    _ => return Err(format!("task {i}: action {}", task["action"])),
                };
                let key = task["key"]
                    .as_str()
                    .filter(|k| !k.is_empty() && !k.split('/').any(|part| part == ".."))
                    .ok_or_else(|| format!("task {i}: key {}", task["key"]))?;
                let size = task["size"]
                    .as_u64()
                    .ok_or_else(|| format!("task {i}: size {}", task["size"]))?;
                Ok(Task {
                    action,
                    key: key.to_owned(),
                    size,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        if tasks.is_empty() {
            return Err("no tasks".into());
        }
        Ok(TaskSet {
            files_on_disk,
            checksum,
            max_repeat_count,
            max_repeat_secs,
            tasks,
        })
    }

    /// The bytes every run moves.
    pub fn bytes(&self) -> u64 {
        self.tasks.iter().map(|t| t.size).sum()
    }
}

/// Where one task's bytes come from or go.
#[derive(Clone, Debug)]
pub enum TaskData {
    /// Uploads read this file; downloads write it (its directory exists).
    File(PathBuf),
    /// Uploads send these bytes (the task's size of them); downloads keep nothing and
    /// return the count of bytes received.
    Memory(Bytes),
}

/// A workload file made ready to run: its tasks, where each one's bytes come from or go
/// (the memory buffer and the download directories made), the bytes a run moves and the
/// tasks at once.
struct Prepared {
    tasks: Vec<Task>,
    data_of: Box<dyn Fn(&Task) -> TaskData + Send + Sync>,
    bytes: u64,
    concurrency: usize,
}

impl Prepared {
    /// `args.workload_file` made ready, or the reason the peers cannot run it.
    fn new(args: &Args) -> Result<Result<Prepared, Outcome>, String> {
        let set = TaskSet::read(&args.workload_file)?;
        if let Some(checksum) = &set.checksum {
            return Ok(Err(Outcome::Unsupported(format!(
                "checksum {checksum}: the peers send their client's default checksum only"
            ))));
        }
        let largest_upload = set
            .tasks
            .iter()
            .filter(|t| t.action == Action::Upload)
            .map(|t| t.size)
            .max()
            .unwrap_or(0);
        let memory = if set.files_on_disk {
            Bytes::new()
        } else {
            Bytes::from(vec![0x5a; largest_upload as usize])
        };
        if set.files_on_disk {
            for task in set.tasks.iter().filter(|t| t.action == Action::Download) {
                if let Some(dir) = args.file.join(&task.key).parent() {
                    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                }
            }
        }
        let dir = args.file.clone();
        let on_disk = set.files_on_disk;
        let data_of = move |task: &Task| {
            if on_disk {
                TaskData::File(dir.join(&task.key))
            } else if task.action == Action::Upload {
                TaskData::Memory(memory.slice(..task.size as usize))
            } else {
                TaskData::Memory(Bytes::new())
            }
        };
        let concurrency = match args.concurrency {
            0 => CONCURRENCY,
            given => given,
        };
        Ok(Ok(Prepared {
            bytes: set.bytes(),
            concurrency: concurrency.min(set.tasks.len()),
            tasks: set.tasks,
            data_of: Box::new(data_of),
        }))
    }

    /// Checks what one task moved.
    fn check(task: &Task, moved: Result<u64, String>) -> Result<(), String> {
        let moved = moved.map_err(|e| format!("{:?} {}: {e}", task.action, task.key))?;
        crate::expect(&format!("bytes of {}", task.key), moved, task.size)
    }
}

/// Runs `args.workload_file` through `transfer(task, data)`, which moves one task's
/// bytes and returns how many it moved (the run fails unless that is the task's size).
/// The memory buffer and the download directories are made before the clock starts.
pub async fn run<F, Fut>(args: &Args, transfer: F) -> Result<Outcome, String>
where
    F: Fn(Task, TaskData) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<u64, String>> + Send + 'static,
{
    let prepared = match Prepared::new(args)? {
        Ok(prepared) => Arc::new(prepared),
        Err(unsupported) => return Ok(unsupported),
    };
    let transfer = Arc::new(transfer);
    let next = Arc::new(AtomicUsize::new(0));
    let watch = Stopwatch::start();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..prepared.concurrency {
        let (prepared, transfer, next) = (prepared.clone(), transfer.clone(), next.clone());
        workers.spawn(async move {
            while let Some(task) = prepared.tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
                let moved = transfer(task.clone(), (prepared.data_of)(task)).await;
                Prepared::check(task, moved)?;
            }
            Ok::<_, String>(())
        });
    }
    while let Some(done) = workers.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    Ok(watch.moved(prepared.bytes))
}

/// [`run`] for a blocking client: `transfer` called from plain threads, one per task in
/// flight, as a program with no async runtime runs tasks side by side.
pub fn run_on_threads(
    args: &Args,
    transfer: impl Fn(Task, TaskData) -> Result<u64, String> + Sync,
) -> Result<Outcome, String> {
    let prepared = match Prepared::new(args)? {
        Ok(prepared) => prepared,
        Err(unsupported) => return Ok(unsupported),
    };
    let next = AtomicUsize::new(0);
    let watch = Stopwatch::start();
    let (done, elapsed) = crate::on_threads(prepared.concurrency, &watch, || {
        while let Some(task) = prepared.tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
            let moved = transfer(task.clone(), (prepared.data_of)(task));
            Prepared::check(task, moved)?;
        }
        Ok(())
    });
    done.into_iter().collect::<Result<Vec<()>, String>>()?;
    Ok(watch.moved_in(elapsed, prepared.bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{"version": 2, "comment": "two", "filesOnDisk": false,
        "checksum": null, "maxRepeatCount": 3, "maxRepeatSecs": 60,
        "tasks": [{"action": "upload", "key": "up/1", "size": 10},
                  {"action": "download", "key": "down/1", "size": 7}]}"#;

    #[test]
    fn parses_the_version_2_format() {
        let set = TaskSet::parse(FILE).unwrap();
        assert_eq!(
            (
                set.files_on_disk,
                set.checksum.as_deref(),
                set.max_repeat_count
            ),
            (false, None, 3)
        );
        assert_eq!(set.max_repeat_secs, 60.0);
        assert_eq!(
            set.tasks,
            [
                Task {
                    action: Action::Upload,
                    key: "up/1".into(),
                    size: 10
                },
                Task {
                    action: Action::Download,
                    key: "down/1".into(),
                    size: 7
                }
            ]
        );
        assert_eq!(set.bytes(), 17);
        let crc = FILE.replace("\"checksum\": null", "\"checksum\": \"CRC32\"");
        assert_eq!(
            TaskSet::parse(&crc).unwrap().checksum.as_deref(),
            Some("CRC32")
        );
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        let err = |text: String| TaskSet::parse(&text).unwrap_err();
        assert_eq!(
            err(FILE.replace("\"version\": 2", "\"version\": 1")),
            "version 1: expected 2"
        );
        assert_eq!(
            err(FILE.replace("\"upload\"", "\"copy\"")),
            "task 0: action \"copy\""
        );
        assert_eq!(
            err(FILE.replace("\"up/1\"", "\"../x\"")),
            "task 0: key \"../x\""
        );
        assert_eq!(
            err(FILE.replace("\"maxRepeatCount\": 3,", "")),
            "no maxRepeatCount"
        );
        assert_eq!(
            err(FILE.replace("\"size\": 7", "\"size\": -7")),
            "task 1: size -7"
        );
    }

    #[test]
    fn runs_every_task_from_memory_and_checks_the_bytes() {
        let dir = std::env::temp_dir().join(format!("perf-peer-tasks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("w.run.json");
        std::fs::write(&file, FILE).unwrap();
        let args = Args {
            kind: "tasks".into(),
            concurrency: 4,
            workload_file: file,
            ..Args::default()
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let outcome = runtime
            .block_on(run(&args, move |task, data| {
                let TaskData::Memory(bytes) = data else {
                    panic!("{data:?}")
                };
                log.lock().unwrap().push((task.key.clone(), bytes.len()));
                async move { Ok(task.size) }
            }))
            .unwrap();
        let Outcome::Moved { bytes, .. } = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(bytes, 17);
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        // The upload gets its size of bytes; the download an empty buffer.
        assert_eq!(seen, [("down/1".to_owned(), 0), ("up/1".to_owned(), 10)]);
        let short = runtime
            .block_on(run(&args, |task, _| async move { Ok(task.size / 2) }))
            .unwrap_err();
        assert!(short.starts_with("bytes of "), "{short}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The most tasks in flight at once over a run of 100, with `--concurrency` as given.
    fn most_in_flight(concurrency: usize) -> usize {
        let dir = std::env::temp_dir().join(format!(
            "perf-peer-concurrency-{}-{concurrency}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let tasks: Vec<String> = (0..100)
            .map(|i| format!(r#"{{"action": "upload", "key": "up/{i}", "size": 1}}"#))
            .collect();
        let file = dir.join("w.run.json");
        std::fs::write(
            &file,
            format!(
                r#"{{"version": 2, "comment": "many", "filesOnDisk": false, "checksum": null,
                "maxRepeatCount": 1, "maxRepeatSecs": 60, "tasks": [{}]}}"#,
                tasks.join(",")
            ),
        )
        .unwrap();
        let args = Args {
            kind: "tasks".into(),
            concurrency,
            workload_file: file,
            ..Args::default()
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let (now, peak) = (in_flight.clone(), most.clone());
        runtime
            .block_on(run(&args, move |task, _| {
                let (now, peak) = (now.clone(), peak.clone());
                async move {
                    peak.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                    // Every other task gets its turn before this one ends.
                    tokio::task::yield_now().await;
                    now.fetch_sub(1, Ordering::SeqCst);
                    Ok(task.size)
                }
            }))
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        most.load(Ordering::SeqCst)
    }

    #[test]
    fn tasks_run_the_harness_concurrency_unless_told_otherwise() {
        assert_eq!(most_in_flight(0), CONCURRENCY);
        assert_eq!(most_in_flight(4), 4);
        assert_eq!(most_in_flight(1), 1);
    }
}
