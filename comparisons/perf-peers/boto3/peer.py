"""boto3 / s3transfer peer of tools/perf: one workload per process, JSON result lines.

    python peer.py <put|get|upload|download|small|list|construct|tasks> --endpoint URL
        --access-key K --secret-key S --key KEY --size N --part-size N --concurrency N
        --count N --file PATH [--ca-file PEM] [--workload FILE]

The protocol of tools/perf-peer (wall_s and op_cpu_s of the operation, bytes, base_kib,
hwm_kib, user_s, sys_s). `upload` with --part-size 0 uses s3transfer's defaults
(8 MiB parts, 10 threads); otherwise TransferConfig(part size, concurrency).
--ca-file is botocore's `verify=` (the one CA bundle it trusts). `tasks` runs a workload
file of AWS's S3 benchmark format (tools/perf-peer/src/tasks.rs) through one s3transfer
TransferManager with max_concurrency --concurrency.
"""

import argparse
import io
import json
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from boto3.s3.transfer import TransferConfig, create_transfer_manager
from botocore.config import Config


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu():
    """CPU seconds of this process so far, every thread's (CLOCK_PROCESS_CPUTIME_ID)."""
    return time.process_time()


def client(args, pool=10):
    return boto3.client(
        "s3",
        endpoint_url=args.endpoint,
        region_name="us-east-1",
        aws_access_key_id=args.access_key,
        aws_secret_access_key=args.secret_key,
        config=Config(s3={"addressing_style": "path"}, max_pool_connections=pool),
        verify=args.ca_file or None,
    )


class Discard(io.RawIOBase):
    """A download target in memory that keeps nothing and counts the bytes."""

    def __init__(self):
        self.count = 0

    def writable(self):
        return True

    def write(self, b):
        self.count += len(b)
        return len(b)


def load_tasks(path):
    """The workload file (version 2 of AWS's S3 benchmark format), checked as perf_peer's is."""
    with open(path) as f:
        doc = json.load(f)
    assert doc["version"] == 2, doc["version"]
    for t in doc["tasks"]:
        assert t["action"] in ("upload", "download"), t
        assert t["key"] and ".." not in t["key"].split("/"), t
    return doc


def run_tasks(s3, args, bucket, doc):
    """Every task through one TransferManager; the bytes moved (each task checked)."""
    tasks = doc["tasks"]
    on_disk = doc["filesOnDisk"]
    memory = {}
    if not on_disk:
        for t in tasks:
            if t["action"] == "upload" and t["size"] not in memory:
                memory[t["size"]] = b"\x5a" * t["size"]
    else:
        for t in tasks:
            if t["action"] == "download":
                os.makedirs(os.path.dirname(os.path.join(args.file, t["key"])), exist_ok=True)
    config = TransferConfig(max_concurrency=max(1, args.concurrency))
    base = status_kib("VmRSS")
    cpu0, start = cpu(), time.perf_counter()
    with create_transfer_manager(s3, config) as tm:
        pending = []
        for t in tasks:
            path = os.path.join(args.file, t["key"])
            if t["action"] == "upload":
                source = path if on_disk else io.BytesIO(memory[t["size"]])
                pending.append((t, tm.upload(source, bucket, t["key"]), None))
            else:
                target = path if on_disk else Discard()
                pending.append((t, tm.download(bucket, t["key"], target), target))
        for t, future, target in pending:
            future.result()
            if t["action"] == "download":
                got = os.path.getsize(path_of(args, t)) if on_disk else target.count
                assert got == t["size"], (t["key"], got, t["size"])
    total = sum(t["size"] for t in tasks)
    return {"wall_s": time.perf_counter() - start, "bytes": total, "base_kib": base,
            "op_cpu_s": cpu() - cpu0}


def path_of(args, task):
    return os.path.join(args.file, task["key"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind")
    for name in ("endpoint", "access-key", "secret-key", "key", "file", "ca-file", "workload"):
        p.add_argument("--" + name, default="")
    for name in ("size", "part-size", "concurrency", "count"):
        p.add_argument("--" + name, type=int, default=0)
    args = p.parse_args()
    bucket = "perf"
    lines = []
    if args.kind == "tasks":
        doc = load_tasks(args.workload)
        if doc.get("checksum") is not None:
            print(json.dumps({"unsupported": "checksum %s: the peers send their client's "
                              "default checksum only" % doc["checksum"]}))
            return
        s3 = client(args, pool=max(10, args.concurrency))
        lines.append(run_tasks(s3, args, bucket, doc))
    elif args.kind == "construct":
        base = status_kib("VmRSS")
        cpu0, start = cpu(), time.perf_counter()
        for _ in range(20):
            client(args)
        lines.append({"wall_s": (time.perf_counter() - start) / 20, "bytes": 0, "base_kib": base,
                      "op_cpu_s": (cpu() - cpu0) / 20})
    else:
        s3 = client(args, pool=max(10, args.concurrency))
        data = b"\x5a" * args.size if args.kind == "put" else None
        base = status_kib("VmRSS")
        cpu0, start = cpu(), time.perf_counter()
        moved = args.size
        if args.kind == "put":
            s3.put_object(Bucket=bucket, Key=args.key, Body=data)
        elif args.kind == "get":
            body = s3.get_object(Bucket=bucket, Key=args.key)["Body"]
            got = 0
            for chunk in body.iter_chunks(1 << 20):
                got += len(chunk)
            assert got == args.size, (got, args.size)
        elif args.kind == "upload":
            config = TransferConfig()
            if args.part_size:
                config = TransferConfig(
                    multipart_threshold=args.part_size,
                    multipart_chunksize=args.part_size,
                    max_concurrency=args.concurrency,
                )
            s3.upload_file(args.file, bucket, args.key, Config=config)
        elif args.kind == "download":
            s3.download_file(bucket, args.key, args.file)
            assert os.path.getsize(args.file) == args.size
        elif args.kind == "small":
            payload = b"\x33" * args.size
            with ThreadPoolExecutor(args.concurrency) as pool:
                for phase in ("put", "get", "head"):
                    def one(i, phase=phase):
                        key = "small/%05d" % i
                        t = time.perf_counter()
                        if phase == "put":
                            s3.put_object(Bucket=bucket, Key=key, Body=payload)
                        elif phase == "get":
                            got = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
                            assert len(got) == args.size
                        else:
                            s3.head_object(Bucket=bucket, Key=key)
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
        elif args.kind == "list":
            keys = 0
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="list/"):
                keys += len(page.get("Contents", []))
            assert keys == args.count, (keys, args.count)
            moved = 0
        else:
            sys.exit("unknown workload " + args.kind)
        if not lines:
            lines.append({"wall_s": time.perf_counter() - start, "bytes": moved, "base_kib": base,
                          "op_cpu_s": cpu() - cpu0})
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hwm = status_kib("VmHWM")
    for line in lines:
        line.update({"hwm_kib": hwm, "user_s": usage.ru_utime, "sys_s": usage.ru_stime})
        print(json.dumps(line))


if __name__ == "__main__":
    main()
