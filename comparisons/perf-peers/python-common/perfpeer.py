"""The protocol of tools/perf-peer for the Python peers of tools/perf (boto3, boto3-crt,
s3wire-python, obstore, s3fs): one workload per process, JSON result lines.

    python <peer>/peer.py <put|get|upload|download|small|list|construct|tasks>
        --endpoint URL --access-key K --secret-key S --key KEY --size N --part-size N
        --concurrency N --count N --file PATH [--ca-file PEM] [--workload FILE]

A peer is a subclass of `Peer` (its client made in `__init__`, one method per operation)
handed to `main`. This module does the rest, the same for every peer: the arguments, the
payloads (made before the clock starts), the timed span (wall_s and op_cpu_s of the
operation alone, `time.process_time()` of every thread), base_kib (VmRSS just before it),
the checks of what was moved (bytes read, file sizes, keys listed), the small-object
phases through a `ThreadPoolExecutor(--concurrency)` with their latencies, `construct` as
the mean of 20 `Peer(args)`, the task files of AWS's S3 benchmark format
(tools/perf-peer/src/tasks.rs), and the closing hwm_kib (VmHWM), user_s and sys_s. A method
that raises `Unsupported(why)` makes the workload's one line `{"unsupported": why}`.
"""

import argparse
import importlib.util
import io
import json
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor

BUCKET = "perf"
REGION = "us-east-1"


class Unsupported(Exception):
    """This client cannot do the workload; the message says why."""


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu():
    """CPU seconds of this process so far, every thread's (CLOCK_PROCESS_CPUTIME_ID)."""
    return time.process_time()


class Discard(io.RawIOBase):
    """A download target in memory that keeps nothing and counts the bytes."""

    def __init__(self):
        self.count = 0

    def writable(self):
        return True

    def write(self, b):
        n = len(b) if not isinstance(b, memoryview) else b.nbytes
        self.count += n
        return n


def load_peer(name):
    """Another peer's `peer.py` as a module (a peer built on another one's code)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", name, "peer.py")
    spec = importlib.util.spec_from_file_location("perf_peer_" + name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Peer:
    """One client. `__init__(args, pool)` makes it (`pool`: connections the workload may
    keep busy at once); each method is one operation of a workload and raises
    `Unsupported` by default."""

    def __init__(self, args, pool=10):
        self.args = args

    def put(self, key, data):
        """One PutObject of `data`."""
        raise Unsupported("no single PUT")

    def get(self, key):
        """One GetObject, streamed; returns the bytes received."""
        raise Unsupported("no GET")

    def upload(self, path, key, part_size, concurrency):
        """The managed upload of the file; part_size 0 means the client's defaults."""
        raise Unsupported("no managed upload")

    def download(self, key, path, size):
        """The managed download into the file. `size` is the object's, as the harness
        knows it (for a peer whose download needs it, in place of a HEAD)."""
        raise Unsupported("no managed download")

    def small_put(self, key, data):
        raise Unsupported("no PUT")

    def small_get(self, key):
        """The object's bytes (their length is checked)."""
        raise Unsupported("no GET")

    def small_head(self, key):
        raise Unsupported("no HEAD")

    def list_count(self, prefix):
        """The keys a paginated ListObjectsV2 of `prefix` finds."""
        raise Unsupported("no listing")

    def tasks(self, jobs, concurrency):
        """Runs every `(task, x)` of `jobs`, `concurrency` at a time: an upload from `x`, a
        path or bytes (the task's size of 0x5a); a download to `x`, a path or a `Discard`.
        Returns once all are done."""
        raise Unsupported("no managed transfers")

    # Helpers for peers without a transfer manager of their own.

    def pooled(self, jobs, concurrency, upload, download):
        """`tasks` through a `ThreadPoolExecutor(concurrency)` calling
        `upload(key, source)` and `download(key, target, size)` (each one managed
        transfer)."""
        with ThreadPoolExecutor(max(1, concurrency)) as pool:
            futures = [
                pool.submit(upload, t["key"], x) if t["action"] == "upload"
                else pool.submit(download, t["key"], x, t["size"])
                for t, x in jobs
            ]
            for f in futures:
                f.result()


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("kind")
    for name in ("endpoint", "access-key", "secret-key", "key", "file", "ca-file", "workload"):
        p.add_argument("--" + name, default="")
    for name in ("size", "part-size", "concurrency", "count"):
        p.add_argument("--" + name, type=int, default=0)
    return p.parse_args(argv)


def load_tasks(path):
    """The workload file (version 2 of AWS's S3 benchmark format), checked as perf_peer's is."""
    with open(path) as f:
        doc = json.load(f)
    assert doc["version"] == 2, doc["version"]
    for t in doc["tasks"]:
        assert t["action"] in ("upload", "download"), t
        assert t["key"] and ".." not in t["key"].split("/"), t
    return doc


def run_tasks(peer, args, doc):
    """Every task through `peer.tasks`; the bytes moved (each download's size checked)."""
    tasks = doc["tasks"]
    on_disk = doc["filesOnDisk"]
    memory = {}
    jobs = []
    for t in tasks:
        path = os.path.join(args.file, t["key"])
        if t["action"] == "upload":
            if not on_disk and t["size"] not in memory:
                memory[t["size"]] = b"\x5a" * t["size"]
            jobs.append((t, path if on_disk else memory[t["size"]]))
        else:
            if on_disk:
                os.makedirs(os.path.dirname(path), exist_ok=True)
            jobs.append((t, path if on_disk else Discard()))
    concurrency = max(1, args.concurrency)
    base = status_kib("VmRSS")
    cpu0, start = cpu(), time.perf_counter()
    peer.tasks(jobs, concurrency)
    wall = time.perf_counter() - start
    op_cpu = cpu() - cpu0
    for t, x in jobs:
        if t["action"] == "download":
            got = os.path.getsize(x) if on_disk else x.count
            assert got == t["size"], (t["key"], got, t["size"])
    total = sum(t["size"] for t in tasks)
    return [{"wall_s": wall, "bytes": total, "base_kib": base, "op_cpu_s": op_cpu}]


def run_small(peer, args, base):
    """PUT, then GET, then HEAD of --count objects of --size bytes, --concurrency at once."""
    payload = b"\x33" * args.size
    lines = []
    with ThreadPoolExecutor(args.concurrency) as pool:
        for phase in ("put", "get", "head"):
            def one(i, phase=phase):
                key = "small/%05d" % i
                t = time.perf_counter()
                if phase == "put":
                    peer.small_put(key, payload)
                elif phase == "get":
                    got = len(peer.small_get(key))
                    assert got == args.size, (key, got, args.size)
                else:
                    peer.small_head(key)
                return time.perf_counter() - t

            c0, t0 = cpu(), time.perf_counter()
            latencies = sorted(pool.map(one, range(args.count)))
            wall = time.perf_counter() - t0
            rank = lambda q: latencies[max(1, min(len(latencies), -(-len(latencies) * q // 100))) - 1]
            lines.append({
                "phase": phase, "ops": args.count, "wall_s": wall,
                "ops_per_s": args.count / wall,
                "p50_ms": rank(50) * 1000, "p99_ms": rank(99) * 1000,
                "bytes": args.size * args.count, "base_kib": base,
                "op_cpu_s": cpu() - c0,
            })
    return lines


def run(peer_class, args):
    """The result lines of one workload (without the closing usage fields)."""
    if args.kind == "tasks":
        doc = load_tasks(args.workload)
        if doc.get("checksum") is not None:
            raise Unsupported("checksum %s: the peers send their client's default checksum only"
                              % doc["checksum"])
        return run_tasks(peer_class(args, pool=max(10, args.concurrency)), args, doc)
    if args.kind == "construct":
        base = status_kib("VmRSS")
        cpu0, start = cpu(), time.perf_counter()
        for _ in range(20):
            peer_class(args)
        return [{"wall_s": (time.perf_counter() - start) / 20, "bytes": 0, "base_kib": base,
                 "op_cpu_s": (cpu() - cpu0) / 20}]
    if args.kind not in ("put", "get", "upload", "download", "small", "list"):
        sys.exit("unknown workload " + args.kind)
    peer = peer_class(args, pool=max(10, args.concurrency))
    data = b"\x5a" * args.size if args.kind == "put" else None
    base = status_kib("VmRSS")
    if args.kind == "small":
        return run_small(peer, args, base)
    cpu0, start = cpu(), time.perf_counter()
    moved = args.size
    if args.kind == "put":
        peer.put(args.key, data)
    elif args.kind == "get":
        got = peer.get(args.key)
        assert got == args.size, (got, args.size)
    elif args.kind == "upload":
        peer.upload(args.file, args.key, args.part_size, args.concurrency)
    elif args.kind == "download":
        peer.download(args.key, args.file, args.size)
    else:
        keys = peer.list_count("list/")
        assert keys == args.count, (keys, args.count)
        moved = 0
    wall, op_cpu = time.perf_counter() - start, cpu() - cpu0
    if args.kind == "download":
        assert os.path.getsize(args.file) == args.size, (os.path.getsize(args.file), args.size)
    return [{"wall_s": wall, "bytes": moved, "base_kib": base, "op_cpu_s": op_cpu}]


def main(peer_class):
    args = parse_args()
    try:
        lines = run(peer_class, args)
    except Unsupported as why:
        print(json.dumps({"unsupported": str(why)}))
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hwm = status_kib("VmHWM")
    for line in lines:
        line.update({"hwm_kib": hwm, "user_s": usage.ru_utime, "sys_s": usage.ru_stime})
        print(json.dumps(line))
