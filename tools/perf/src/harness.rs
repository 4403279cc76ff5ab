//! `perf run`: every workload for every client on every server, each repetition in its own
//! process, then the JSON lines and the report written into the output directory. A
//! `tasks` workload repeats at most its file's `maxRepeatCount` times and starts no
//! repetition after `maxRepeatSecs` of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::servers::{self, Server};
use perf_peer::tasks::{Action, TaskSet};

use crate::workloads::{Sizes, Workload, human, workloads};
use crate::{clients, machine, report};

/// The options of `perf run`.
#[derive(Debug)]
struct Options {
    reps: usize,
    sizes: Sizes,
    clients: Vec<String>,
    servers: Vec<String>,
    only: Vec<String>,
    out: PathBuf,
    name: String,
    weight: bool,
}

/// `--name value` flags (and the value-less `switches`, as "1") by name.
pub fn flags(args: &[String], switches: &[&str]) -> Result<BTreeMap<String, String>, String> {
    let mut f = BTreeMap::new();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        let name = flag
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {flag}"))?;
        let value = if switches.contains(&name) {
            "1".to_owned()
        } else {
            iter.next()
                .ok_or_else(|| format!("{flag} needs a value"))?
                .clone()
        };
        f.insert(name.to_owned(), value);
    }
    Ok(f)
}

fn options(args: &[String]) -> Result<Options, String> {
    let f = flags(args, &["tiny", "weight"])?;
    let list = |name: &str, default: &str| -> Vec<String> {
        f.get(name)
            .map_or(default, String::as_str)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let options = Options {
        reps: f
            .get("reps")
            .map_or(Ok(5), |v| v.parse())
            .map_err(|_| "bad --reps")?,
        sizes: if f.contains_key("tiny") {
            Sizes::TINY
        } else {
            Sizes::REAL
        },
        clients: list("clients", "s3-wire,curl"),
        servers: list("servers", servers::DEFAULT_SERVERS),
        only: list("workloads", ""),
        out: PathBuf::from(f.get("out").map_or("measurements", String::as_str)),
        name: f
            .get("name")
            .cloned()
            .unwrap_or_else(|| format!("perf-{}", machine::today())),
        weight: f.contains_key("weight"),
    };
    for name in f.keys() {
        let known = [
            "reps",
            "tiny",
            "clients",
            "servers",
            "workloads",
            "out",
            "name",
            "weight",
        ];
        if !known.contains(&name.as_str()) {
            return Err(format!("unknown flag --{name}"));
        }
    }
    Ok(options)
}

/// `perf run [--flags]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = options(args)?;
    std::fs::create_dir_all(&options.out).map_err(|e| format!("{}: {e}", options.out.display()))?;
    let command = std::iter::once("perf".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let load_before = machine::load();
    let scratch = PathBuf::from("/dev/shm").join(format!("s3w-perf-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    // The task workloads' files on disk (filesOnDisk), not on tmpfs.
    let disk = std::env::temp_dir().join(format!("s3w-perf-tasks-{}", std::process::id()));
    let result = run_all(&scratch, &disk, &options);
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_dir_all(&disk);
    let records = result?;
    let load_after = machine::load();
    // Clean builds after the transfers, so they do not load the machine under them.
    let weight = if options.weight {
        Some(machine::build_weight()?)
    } else {
        None
    };
    let meta = json!({
        "meta": true,
        "date": machine::now_utc(),
        "commit": machine::git(&["rev-parse", "--short", "HEAD"]),
        "dirty": !machine::git(&["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        "cpu": machine::cpu_model(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "load_before": load_before,
        "load_after": load_after,
        "toolchain": machine::tool_version("rustc", &["-V"]),
        "curl": machine::tool_version("curl", &["-V"]).lines().next().unwrap_or("").to_owned(),
        "command": command,
        "reps": options.reps,
        "peer_runtime": std::env::var(perf_peer::RUNTIME_VAR).unwrap_or_else(|_| "multi-thread".into()),
        "s3_wire_settings": crate::servers::SETTINGS_VARS
            .iter()
            .filter_map(|name| std::env::var(name).ok().map(|value| format!("{name}={value}")))
            .collect::<Vec<_>>(),
        "build_weight": weight,
    });
    let mut jsonl = format!("{meta}\n");
    for record in &records {
        jsonl.push_str(&format!("{record}\n"));
    }
    let jsonl_path = options.out.join(format!("{}.jsonl", options.name));
    std::fs::write(&jsonl_path, jsonl).map_err(|e| e.to_string())?;
    let md = report::report(&meta, &records, &options.clients);
    let md_path = options.out.join(format!("{}.md", options.name));
    std::fs::write(&md_path, &md).map_err(|e| e.to_string())?;
    println!("{md}");
    eprintln!("wrote {} and {}", jsonl_path.display(), md_path.display());
    Ok(())
}

fn run_all(scratch: &Path, disk: &Path, options: &Options) -> Result<Vec<Value>, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let only = &options.only;
    let workloads: Vec<Workload> = workloads(options.sizes)?
        .into_iter()
        .filter(|w| only.is_empty() || only.iter().any(|o| o == w.kind || *o == w.name))
        .collect();
    // Source files on tmpfs, one per upload size, plus the single-PUT file curl reads.
    let mut files = BTreeMap::new();
    for w in &workloads {
        if matches!(w.kind, "upload" | "put") && !files.contains_key(&w.size) {
            let path = scratch.join(format!("source-{}", human(w.size)));
            servers::write_file(&path, w.size).map_err(|e| e.to_string())?;
            files.insert(w.size, path);
        }
    }
    let mut records = Vec::new();
    for server_name in &options.servers {
        let server = servers::start(server_name, scratch)?;
        runtime.block_on(servers::setup(&server, &workloads))?;
        for w in &workloads {
            let tasks = match w.kind {
                "tasks" => Some(TaskFiles::prepare(w, disk)?),
                _ => None,
            };
            for client in &options.clients {
                let mut spent_s = 0.0;
                for rep in 0..options.reps {
                    if let Some(tasks) = &tasks
                        && (rep as u64 >= tasks.set.max_repeat_count
                            || spent_s >= tasks.set.max_repeat_secs)
                    {
                        break;
                    }
                    let download = scratch.join("download.bin");
                    let mut args = peer_args(w, &server, client, &files, &download);
                    if let Some(tasks) = &tasks {
                        args.file = tasks.dir.clone();
                    }
                    let outcome = clients::run(client, &args, scratch);
                    let _ = std::fs::remove_file(&download);
                    if let Some(tasks) = &tasks {
                        tasks.remove_downloads();
                    }
                    let base = json!({
                        "server": server.name, "workload": w.name, "client": client, "rep": rep,
                    });
                    let lines = outcome.unwrap_or_else(|err| vec![json!({ "error": err })]);
                    let unsupported = lines.iter().any(|l| !l["unsupported"].is_null());
                    for line in lines {
                        spent_s += line["wall_s"].as_f64().unwrap_or(0.0);
                        let mut record = base.clone();
                        merge(&mut record, line);
                        eprintln!("{record}");
                        records.push(record);
                    }
                    if unsupported {
                        break;
                    }
                }
            }
            if let Some(tasks) = tasks {
                let _ = std::fs::remove_dir_all(&tasks.dir);
            }
        }
    }
    Ok(records)
}

/// A `tasks` workload's file set and the directory of its files on disk: the upload
/// tasks' sources written before the first repetition, each repetition's downloads
/// removed after it.
struct TaskFiles {
    set: TaskSet,
    dir: PathBuf,
}

impl TaskFiles {
    fn prepare(w: &Workload, disk: &Path) -> Result<TaskFiles, String> {
        let set = w.task_set()?;
        let dir = disk.join(w.name.replace(':', "-"));
        if set.files_on_disk {
            for task in set.tasks.iter().filter(|t| t.action == Action::Upload) {
                let path = dir.join(&task.key);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                servers::write_file(&path, task.size)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        Ok(TaskFiles { set, dir })
    }

    fn remove_downloads(&self) {
        if self.set.files_on_disk {
            for task in self
                .set
                .tasks
                .iter()
                .filter(|t| t.action == Action::Download)
            {
                let _ = std::fs::remove_file(self.dir.join(&task.key));
            }
        }
    }
}

/// What a peer is told for one repetition of `w`: reads of the objects `setup` made,
/// writes to a key of its own.
fn peer_args(
    w: &Workload,
    server: &Server,
    client: &str,
    files: &BTreeMap<u64, PathBuf>,
    download: &Path,
) -> perf_peer::Args {
    let mut args = perf_peer::Args::default();
    args.kind = w.kind.to_owned();
    args.endpoint = server.endpoint.clone();
    args.access_key = server.access_key.clone();
    args.secret_key = server.secret_key.clone();
    args.key = match w.kind {
        "get" => servers::GET_KEY.to_owned(),
        "download" => servers::DOWNLOAD_KEY.to_owned(),
        _ => format!("{}/{client}", w.name),
    };
    args.size = w.size;
    args.part_size = w.part_size;
    args.concurrency = w.concurrency;
    args.count = w.count;
    args.file = match w.kind {
        "download" => download.to_path_buf(),
        _ => files.get(&w.size).cloned().unwrap_or_default(),
    };
    args.ca_file = server.ca_file.clone().unwrap_or_default();
    args.workload_file = w.tasks.clone().unwrap_or_default();
    args
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        for (k, v) in from {
            into.insert(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_defaults_and_errors() {
        let o = options(&[]).unwrap();
        assert_eq!(
            (o.reps, o.weight, o.name.starts_with("perf-")),
            (5, false, true)
        );
        assert_eq!(o.clients, ["s3-wire", "curl"]);
        assert_eq!(o.servers, ["null-tls", "null", "local-s3"]);
        let args: Vec<String> = [
            "--tiny",
            "--reps",
            "1",
            "--clients",
            "s3-wire,boto3",
            "--weight",
        ]
        .map(String::from)
        .into();
        let o = options(&args).unwrap();
        assert_eq!(
            (o.reps, o.weight, o.sizes.single),
            (1, true, Sizes::TINY.single)
        );
        assert_eq!(o.clients, ["s3-wire", "boto3"]);
        assert_eq!(
            options(&["--bogus".into(), "1".into()]).unwrap_err(),
            "unknown flag --bogus"
        );
        assert_eq!(
            options(&["--reps".into()]).unwrap_err(),
            "--reps needs a value"
        );
        assert_eq!(
            options(&["reps".into()]).unwrap_err(),
            "unexpected argument reps"
        );
    }
}
