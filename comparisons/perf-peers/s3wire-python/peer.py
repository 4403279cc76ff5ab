"""s3wire peer of tools/perf (this repository's Python package, python/, built in release
mode by the harness): one workload per process, JSON result lines, the protocol spoken by
../python-common/perfpeer.py. One s3wire.Client and its boto3-named calls. See README.md.
"""

import io
import os
import sys

import s3wire

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))
import perfpeer  # noqa: E402
from perfpeer import BUCKET  # noqa: E402


def sync_files():
    """The harness's S3W_PERF_SYNC_FILES (`on`, the default, or `off`), as the Rust clients
    of a run read it (tools/perf/src/servers.rs)."""
    value = os.environ.get("S3W_PERF_SYNC_FILES", "on")
    if value not in ("on", "off"):
        raise SystemExit(f"S3W_PERF_SYNC_FILES={value}: expected on or off")
    return value == "on"


class S3wire(perfpeer.Peer):
    def __init__(self, args, pool=10):
        super().__init__(args)
        self.s3 = s3wire.Client(
            endpoint_url=args.endpoint,
            region_name=perfpeer.REGION,
            aws_access_key_id=args.access_key,
            aws_secret_access_key=args.secret_key,
            ca_bundle=args.ca_file or None,
            sync_files=sync_files(),
        )

    def put(self, key, data):
        self.s3.put(BUCKET, key, data)

    def get(self, key):
        got = 0
        with self.s3.get(BUCKET, key, stream=True) as body:
            while True:
                chunk = body.read(1 << 20)
                if not chunk:
                    return got
                got += len(chunk)

    def upload(self, path, key, part_size, concurrency):
        config = None
        if part_size:
            config = s3wire.TransferConfig(multipart_threshold=part_size,
                                           multipart_chunksize=part_size,
                                           max_concurrency=concurrency)
        self.s3.upload_file(path, BUCKET, key, Config=config)

    def download(self, key, path, size):
        self.s3.download_file(BUCKET, key, path)

    def small_put(self, key, data):
        self.s3.put(BUCKET, key, data)

    def small_get(self, key):
        return self.s3.get(BUCKET, key)

    def small_head(self, key):
        self.s3.head(BUCKET, key)

    def list_count(self, prefix):
        return sum(1 for _ in self.s3.list(BUCKET, prefix))

    def tasks(self, jobs, concurrency):
        self.pooled(jobs, concurrency, self.task_upload, self.task_download)

    def task_upload(self, key, source):
        if isinstance(source, str):
            self.s3.upload_file(source, BUCKET, key)
        else:
            self.s3.upload_fileobj(io.BytesIO(source), BUCKET, key)

    def task_download(self, key, target, size):
        if isinstance(target, str):
            self.s3.download_file(BUCKET, key, target)
        else:
            self.s3.download_fileobj(BUCKET, key, target)


if __name__ == "__main__":
    perfpeer.main(S3wire)
