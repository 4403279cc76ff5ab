//! The report: medians per (server, workload, client), s3-wire's ratios to the best peer
//! and to curl, CPU and memory, and the build weight when it was measured.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::stats;
use crate::{GIB, MIB};

/// One cell: the medians of a (server, workload, client) over its repetitions.
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    /// Throughput in MiB/s (transfers), ops/s (small objects), or 1/latency.
    rate: f64,
    wall: f64,
    /// The whole process's user+system CPU.
    cpu: f64,
    /// The operation's CPU (the peer's own figure; curl's is its whole process).
    op_cpu: f64,
    hwm_mib: f64,
    over_base_mib: Option<f64>,
    cpu_per_gib: Option<f64>,
    extra: String,
}

fn workload_label(record: &Value) -> String {
    let workload = record["workload"].as_str().unwrap_or("");
    match record["phase"].as_str() {
        Some(phase) => format!("{workload} {phase}"),
        None => workload.to_owned(),
    }
}

fn cells(records: &[Value]) -> BTreeMap<(String, String, String), Result<Cell, String>> {
    let mut groups: BTreeMap<(String, String, String), Vec<&Value>> = BTreeMap::new();
    for record in records.iter().filter(|r| r["unsupported"].is_null()) {
        let key = (
            record["server"].as_str().unwrap_or("").to_owned(),
            workload_label(record),
            record["client"].as_str().unwrap_or("").to_owned(),
        );
        groups.entry(key).or_default().push(record);
    }
    groups
        .into_iter()
        .map(|(key, group)| (key, summarize(&group)))
        .collect()
}

fn summarize(group: &[&Value]) -> Result<Cell, String> {
    if let Some(err) = group.iter().find_map(|r| r["error"].as_str()) {
        return Err(format!(
            "error: {}",
            err.chars().take(80).collect::<String>()
        ));
    }
    let values = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<f64> {
        group.iter().filter_map(|r| f(r)).collect()
    };
    let median = |v: Vec<f64>| stats::min_median_max(&v).map(|(_, m, _)| m);
    let minmax = |v: Vec<f64>| stats::min_median_max(&v);
    let wall = median(values(&|r| r["wall_s"].as_f64())).unwrap_or(0.0);
    let process_cpu = |r: &Value| Some(r["user_s"].as_f64()? + r["sys_s"].as_f64()?);
    let cpu = median(values(&process_cpu)).unwrap_or(0.0);
    // curl reports no operation figure: its whole process is its operation.
    let op_cpu = median(values(&|r| {
        r["op_cpu_s"].as_f64().or_else(|| process_cpu(r))
    }))
    .unwrap_or(0.0);
    let hwm_mib = median(values(&|r| Some(r["hwm_kib"].as_f64()? / 1024.0))).unwrap_or(0.0);
    let over_base_mib = median(values(&|r| {
        Some((r["hwm_kib"].as_f64()? - r["base_kib"].as_f64()?) / 1024.0)
    }));
    let bytes = group[0]["bytes"].as_f64().unwrap_or(0.0);
    let (rate, extra) = if group[0]["ops_per_s"].as_f64().is_some() {
        let ops = values(&|r| r["ops_per_s"].as_f64());
        let (lo, m, hi) = minmax(ops).unwrap_or_default();
        let p50 = median(values(&|r| r["p50_ms"].as_f64())).unwrap_or(0.0);
        let p99 = median(values(&|r| r["p99_ms"].as_f64())).unwrap_or(0.0);
        (
            m,
            format!("{m:.0} ops/s [{lo:.0}–{hi:.0}], p50 {p50:.2} ms, p99 {p99:.2} ms"),
        )
    } else if bytes > 0.0 {
        let rates = values(&|r| Some(r["bytes"].as_f64()? / MIB as f64 / r["wall_s"].as_f64()?));
        let (lo, m, hi) = minmax(rates).unwrap_or_default();
        // AWS's benchmarks report gigabits per second; the task workloads say both.
        let gbps = if group[0]["workload"]
            .as_str()
            .is_some_and(|w| w.starts_with("tasks:"))
        {
            format!(" ({:.2} Gb/s)", m * MIB as f64 * 8.0 / 1e9)
        } else {
            String::new()
        };
        (m, format!("{m:.0} MiB/s [{lo:.0}–{hi:.0}]{gbps}"))
    } else {
        let walls = values(&|r| r["wall_s"].as_f64());
        let (lo, m, hi) = minmax(walls).unwrap_or_default();
        let fmt = |s: f64| {
            if s < 0.01 {
                format!("{:.1} µs", s * 1e6)
            } else {
                format!("{:.0} ms", s * 1e3)
            }
        };
        (1.0 / m, format!("{} [{}–{}]", fmt(m), fmt(lo), fmt(hi)))
    };
    let cpu_per_gib = (bytes >= MIB as f64 && group[0]["ops_per_s"].is_null())
        .then(|| op_cpu / (bytes / GIB as f64));
    Ok(Cell {
        rate,
        wall,
        cpu,
        op_cpu,
        hwm_mib,
        over_base_mib,
        cpu_per_gib,
        extra,
    })
}

/// Where a server's table goes: `null-tls` first, then `null`, then `local-s3`, then
/// any other.
fn server_rank(server: &str) -> usize {
    ["null-tls", "null", "local-s3"]
        .iter()
        .position(|s| *s == server)
        .unwrap_or(3)
}

/// What a server's table heading adds to its name.
fn server_note(server: &str) -> &'static str {
    match server {
        "null-tls" => " (TLS: the null server behind rustls, HTTP/1.1, a CA generated for the run)",
        "null" => " (plain HTTP)",
        "local-s3" => " (plain HTTP, data on tmpfs)",
        _ => "",
    }
}

pub fn report(meta: &Value, records: &[Value], clients: &[String]) -> String {
    let cells = cells(records);
    let mut md = String::new();
    let s = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let _ = writeln!(md, "# perf: transfers, CPU and memory, side by side\n");
    let _ = writeln!(md, "- date: {}", s(&meta["date"]));
    let _ = writeln!(
        md,
        "- commit: {}{}",
        s(&meta["commit"]),
        if meta["dirty"] == json!(true) {
            " (with uncommitted changes)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        md,
        "- machine: {}, {} cores available",
        s(&meta["cpu"]),
        meta["cores"]
    );
    let _ = writeln!(
        md,
        "- load average before: {}, after: {}",
        s(&meta["load_before"]),
        s(&meta["load_after"])
    );
    let _ = writeln!(
        md,
        "- toolchain: {}; {}",
        s(&meta["toolchain"]),
        s(&meta["curl"])
    );
    let _ = writeln!(md, "- command: `{}`", s(&meta["command"]));
    let _ = writeln!(
        md,
        "- repetitions: {} per cell, each in its own child process; median [min–max]",
        meta["reps"]
    );
    let settings: Vec<String> = meta["s3_wire_settings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|setting| setting.as_str().map(|setting| format!("`{setting}`")))
        .collect();
    let _ = writeln!(
        md,
        "- s3-wire's settings: {}",
        if settings.is_empty() {
            "the defaults".to_owned()
        } else {
            settings.join(", ")
        }
    );
    let _ = writeln!(
        md,
        "- the Rust peers' tokio runtime: {} (`{}`)\n",
        meta["peer_runtime"].as_str().unwrap_or("multi-thread"),
        perf_peer::RUNTIME_VAR
    );
    let mut rows: Vec<(String, String)> = cells
        .keys()
        .map(|(a, b, _)| (a.clone(), b.clone()))
        .collect();
    rows.dedup();
    // One table per server, TLS first: clients reach S3 over TLS.
    rows.sort_by_key(|(server, _)| server_rank(server));
    let mut current = None;
    for (server, workload) in &rows {
        if current != Some(server) {
            current = Some(server);
            let _ = writeln!(md, "\n## Medians: {server}{}\n", server_note(server));
            let _ = write!(md, "| server | workload |");
            for c in clients {
                let _ = write!(md, " {c} |");
            }
            let _ = writeln!(md, " s3-wire / best peer | s3-wire / curl |");
            let _ = write!(md, "|---|---|");
            for _ in clients {
                let _ = write!(md, "---:|");
            }
            let _ = writeln!(md, "---:|---:|");
        }
        let _ = write!(md, "| {server} | {workload} |");
        let get = |c: &str| cells.get(&(server.clone(), workload.clone(), c.to_owned()));
        for c in clients {
            let text = match get(c) {
                Some(Ok(cell)) => cell.extra.clone(),
                Some(Err(e)) => e.clone(),
                None => "—".into(),
            };
            let _ = write!(md, " {text} |");
        }
        let ours = match get("s3-wire") {
            Some(Ok(cell)) => Some(cell.rate),
            _ => None,
        };
        let best_peer = clients
            .iter()
            .filter(|c| !crate::clients::is_s3_wire(c) && *c != "curl")
            .filter_map(|c| match get(c) {
                Some(Ok(cell)) => Some(cell.rate),
                _ => None,
            })
            .fold(None, |acc: Option<f64>, r| {
                Some(acc.map_or(r, |a| a.max(r)))
            });
        let curl = match get("curl") {
            Some(Ok(cell)) => Some(cell.rate),
            _ => None,
        };
        let ratio = |other: Option<f64>| match (ours, other) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
            _ => "—".into(),
        };
        let _ = writeln!(md, " {} | {} |", ratio(best_peer), ratio(curl));
    }
    // One line per client and reason: the kinds of workload and the servers it covers.
    type Covered = (BTreeSet<String>, BTreeSet<String>);
    let mut unsupported: BTreeMap<(String, String), Covered> = BTreeMap::new();
    for r in records {
        let (Some(reason), Some(workload), Some(client), Some(server)) = (
            r["unsupported"].as_str(),
            r["workload"].as_str(),
            r["client"].as_str(),
            r["server"].as_str(),
        ) else {
            continue;
        };
        let kind = workload.split(['-', ':']).next().unwrap_or(workload);
        let (kinds, servers) = unsupported
            .entry((client.to_owned(), reason.to_owned()))
            .or_default();
        kinds.insert(kind.to_owned());
        servers.insert(server.to_owned());
    }
    let reasons: Vec<String> = unsupported
        .iter()
        .map(|((client, reason), (kinds, servers))| {
            let list = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>().join(", ");
            format!(
                "- {client} / {} ({}): — ({reason})",
                list(kinds),
                list(servers)
            )
        })
        .collect();
    if !reasons.is_empty() {
        let _ = writeln!(md, "\nNot measured:\n\n{}", reasons.join("\n"));
    }
    let _ = writeln!(
        md,
        "\nConstruction is the mean of 100 `build()` calls in one process (the Python peers: 20 client constructions); its ratio compares 1/time.\n"
    );
    let _ = writeln!(md, "## CPU and memory (medians)\n");
    let _ = writeln!(
        md,
        "| server | workload | client | wall | CPU, operation | CPU, process | CPU s/GiB | peak RSS (VmHWM) | over baseline |"
    );
    let _ = writeln!(md, "|---|---|---|---:|---:|---:|---:|---:|---:|");
    for ((server, workload, client), cell) in &cells {
        let Ok(cell) = cell else { continue };
        let _ = writeln!(
            md,
            "| {server} | {workload} | {client} | {:.3} s | {:.2} s | {:.2} s | {} | {:.1} MiB | {} |",
            cell.wall,
            cell.op_cpu,
            cell.cpu,
            cell.cpu_per_gib.map_or("—".into(), |v| format!("{v:.2}")),
            cell.hwm_mib,
            cell.over_base_mib
                .map_or("—".into(), |v| format!("{v:.1} MiB")),
        );
    }
    let _ = writeln!(
        md,
        "\n\"CPU, operation\" is the on-CPU time of the peer's threads while the operation ran (Rust peers: the sum of `/proc/self/task/*/schedstat` before and after, in nanoseconds; the Python peers: `time.process_time()`; the small-object phases each have their own); CPU s/GiB divides it by the bytes moved. \"CPU, process\" and peak RSS are the whole process's, start-up and interpreter included (peers: their own /proc at exit; curl: `/usr/bin/time`, whose whole process is also its operation figure). \"over baseline\" is VmHWM minus VmRSS just before the workload started (after runtime, client and, for the PUT from memory, the 64 MiB buffer). A `tasks:` workload is one of the files of `tools/perf/workloads/` (AWS's S3 benchmark format): every object it lists moved, 64 transfers at a time, from and to disk or memory as the file says; its rate is all the bytes over the wall time of the whole set. Over `null-tls` every client sends what it sends over HTTPS (s3-wire: unsigned payloads with a CRC32 checksum). `null` and `local-s3` are plain HTTP, where s3-wire signs every payload byte because no TLS protects it (the SHA-256 of an in-memory body or a file part, hashed ahead together with the checksum; SHA-256 chunk signatures for one-shot streams) and adds a CRC32 checksum; curl sends `UNSIGNED-PAYLOAD` with no checksum, so its floor does less work per byte."
    );
    let _ = writeln!(md, "\n## Build weight\n");
    match meta["build_weight"].as_str() {
        Some(table) => {
            let _ = writeln!(
                md,
                "Clean release builds of the same HEAD-object program (`comparisons/size/measure.sh`, after the transfers): normal dependency packages, build CPU and wall time, stripped binary size.\n\n{table}"
            );
        }
        None => {
            let _ = writeln!(
                md,
                "Not measured in this run (`perf run --weight` does); the last measurement is in `measurements/client-size.md`."
            );
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(client: &str, wall: f64, hwm: f64) -> Value {
        json!({"server": "null", "workload": "put-64MiB", "client": client, "wall_s": wall,
               "bytes": 64 * MIB, "hwm_kib": hwm, "base_kib": 1024.0, "user_s": 0.1, "sys_s": 0.1})
    }

    #[test]
    fn cells_take_medians_and_report_ratios() {
        let records = vec![
            record("s3-wire", 0.5, 4096.0),
            record("s3-wire", 0.25, 2048.0),
            record("s3-wire", 1.0, 8192.0),
            record("curl", 0.5, 3072.0),
        ];
        let cells = cells(&records);
        let ours = cells[&("null".into(), "put-64MiB".into(), "s3-wire".into())]
            .clone()
            .unwrap();
        assert_eq!(ours.rate, 128.0);
        assert_eq!(ours.hwm_mib, 4.0);
        assert_eq!(ours.over_base_mib, Some(3.0));
        assert_eq!(ours.cpu_per_gib, Some(0.2 / 0.0625));
        let md = report(
            &json!({"reps": 3}),
            &records,
            &["s3-wire".into(), "curl".into()],
        );
        assert!(
            md.contains(
                "| null | put-64MiB | 128 MiB/s [64–256] | 128 MiB/s [128–128] | — | 1.00× |"
            ),
            "{md}"
        );
        assert!(md.contains("- s3-wire's settings: the defaults\n"), "{md}");
        let set = json!({"reps": 3, "s3_wire_settings": ["S3W_PERF_SYNC_FILES=off"]});
        let md = report(&set, &records, &["s3-wire".into(), "curl".into()]);
        assert!(
            md.contains("- s3-wire's settings: `S3W_PERF_SYNC_FILES=off`\n"),
            "{md}"
        );
    }

    #[test]
    fn unsupported_and_failed_cells() {
        let records = vec![
            json!({"server": "null", "workload": "list-10", "client": "curl", "unsupported": "no"}),
            json!({"server": "null-tls", "workload": "tasks:x-1", "client": "curl", "unsupported": "no"}),
            json!({"server": "null-tls", "workload": "list-10", "client": "old", "unsupported": "tls"}),
            json!({"server": "null", "workload": "list-10", "client": "s3-wire", "error": "boom"}),
        ];
        let cells = cells(&records);
        assert!(!cells.contains_key(&("null".into(), "list-10".into(), "curl".into())));
        let md = report(
            &json!({"reps": 1}),
            &records,
            &["s3-wire".into(), "curl".into()],
        );
        // One line per client and reason, naming the kinds and the servers.
        assert!(
            md.contains(
                "- curl / list, tasks (null, null-tls): — (no)\n- old / list (null-tls): — (tls)"
            ),
            "{md}"
        );
        assert_eq!(
            cells[&("null".into(), "list-10".into(), "s3-wire".into())],
            Err("error: boom".into())
        );
    }
}
