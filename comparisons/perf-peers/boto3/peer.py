"""boto3 / s3transfer peer of tools/perf: one workload per process, JSON result lines.

    python peer.py <put|get|upload|download|small|list|construct|tasks> --endpoint URL
        --access-key K --secret-key S --key KEY --size N --part-size N --concurrency N
        --count N --file PATH [--ca-file PEM] [--workload FILE]

The protocol of tools/perf-peer, spoken by ../python-common/perfpeer.py (timing, checks,
result lines). `upload` with --part-size 0 uses s3transfer's defaults (8 MiB parts,
10 threads); otherwise TransferConfig(part size, concurrency). --ca-file is botocore's
`verify=` (the one CA bundle it trusts). `tasks` runs a workload file of AWS's S3
benchmark format (tools/perf-peer/src/tasks.rs) through one s3transfer TransferManager
with max_concurrency --concurrency. The boto3-crt peer is this class with the CRT's
transfer manager.
"""

import io
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig, create_transfer_manager
from botocore.config import Config
from s3transfer.subscribers import BaseSubscriber

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))
import perfpeer  # noqa: E402
from perfpeer import BUCKET  # noqa: E402


class Boto3(perfpeer.Peer):
    def __init__(self, args, pool=10):
        super().__init__(args)
        self.s3 = boto3.client(
            "s3",
            endpoint_url=args.endpoint,
            region_name=perfpeer.REGION,
            aws_access_key_id=args.access_key,
            aws_secret_access_key=args.secret_key,
            config=Config(s3={"addressing_style": "path"}, max_pool_connections=pool),
            verify=args.ca_file or None,
        )

    def transfer_manager(self, config):
        """s3transfer's TransferManager for `config` (the classic one)."""
        return create_transfer_manager(self.s3, config)

    def transfer_config(self, part_size, concurrency):
        """upload's TransferConfig: the defaults, or this part size at this concurrency."""
        if not part_size:
            return TransferConfig()
        return TransferConfig(
            multipart_threshold=part_size,
            multipart_chunksize=part_size,
            max_concurrency=concurrency,
        )

    def put(self, key, data):
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=data)

    def get(self, key):
        body = self.s3.get_object(Bucket=BUCKET, Key=key)["Body"]
        got = 0
        for chunk in body.iter_chunks(1 << 20):
            got += len(chunk)
        return got

    def upload(self, path, key, part_size, concurrency):
        self.s3.upload_file(path, BUCKET, key,
                            Config=self.transfer_config(part_size, concurrency))

    def download(self, key, path, size):
        self.s3.download_file(BUCKET, key, path)

    def small_put(self, key, data):
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=data)

    def small_get(self, key):
        return self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()

    def small_head(self, key):
        self.s3.head_object(Bucket=BUCKET, Key=key)

    def list_count(self, prefix):
        keys = 0
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
            keys += len(page.get("Contents", []))
        return keys

    def tasks(self, jobs, concurrency, config=None, slots=None):
        """Every job submitted to one transfer manager (`config`: TransferConfig with
        max_concurrency); with `slots`, a semaphore taken before each submission and given
        back when that transfer is done."""
        subscribers = [Release(slots)] if slots else None
        config = config or TransferConfig(max_concurrency=concurrency)
        with self.transfer_manager(config) as tm:
            futures = []
            for t, x in jobs:
                if slots:
                    slots.acquire()
                if t["action"] == "upload":
                    source = x if isinstance(x, str) else io.BytesIO(x)
                    futures.append(tm.upload(source, BUCKET, t["key"], subscribers=subscribers))
                else:
                    futures.append(tm.download(BUCKET, t["key"], x, subscribers=subscribers))
            for f in futures:
                f.result()


class Release(BaseSubscriber):
    """Gives a slot back when its transfer is done (failed or not)."""

    def __init__(self, slots):
        self.slots = slots

    def on_done(self, future, **kwargs):
        self.slots.release()

if __name__ == "__main__":
    perfpeer.main(Boto3)
