"""s3fs peer of tools/perf (fsspec's S3 filesystem on aiobotocore): one workload per
process, JSON result lines, the protocol spoken by ../python-common/perfpeer.py. s3fs's
own blocking API on one S3FileSystem: pipe_file, cat_file, put_file, get_file, info,
find. See README.md.
"""

import os
import sys

import s3fs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))
import perfpeer  # noqa: E402


def remote(key):
    return perfpeer.BUCKET + "/" + key


class S3fs(perfpeer.Peer):
    def __init__(self, args, pool=10):
        super().__init__(args)
        self.fs = s3fs.S3FileSystem(
            key=args.access_key,
            secret=args.secret_key,
            endpoint_url=args.endpoint,
            client_kwargs={"region_name": perfpeer.REGION, "verify": args.ca_file or None},
            config_kwargs={"s3": {"addressing_style": "path"}, "max_pool_connections": pool},
            skip_instance_cache=True,
            use_listings_cache=False,
        )
        # The aiobotocore client (s3fs makes it on first use otherwise).
        self.fs.connect()

    def put(self, key, data):
        # One PutObject: pipe_file sends one below twice its chunksize (50 MiB).
        self.fs.pipe_file(remote(key), data, chunksize=max(len(data), 5 << 20))

    def get(self, key):
        # One GetObject, its body read whole (cat_file splits an object larger than its
        # block size into concurrent ranges unless max_concurrency is 1).
        return len(self.fs.cat_file(remote(key), max_concurrency=1))

    def upload(self, path, key, part_size, concurrency):
        if part_size:
            self.fs.put_file(path, remote(key), chunksize=part_size, max_concurrency=concurrency)
        else:
            self.fs.put_file(path, remote(key))

    def download(self, key, path, size):
        self.fs.get_file(remote(key), path)

    def small_put(self, key, data):
        self.fs.pipe_file(remote(key), data)

    def small_get(self, key):
        return self.fs.cat_file(remote(key))

    def small_head(self, key):
        self.fs.info(remote(key), refresh=True)

    def list_count(self, prefix):
        return len(self.fs.find(remote(prefix)))

    def tasks(self, jobs, concurrency):
        self.pooled(jobs, concurrency, self.task_upload, self.task_download)

    def task_upload(self, key, source):
        if isinstance(source, str):
            self.fs.put_file(source, remote(key))
        else:
            self.fs.pipe_file(remote(key), source)

    def task_download(self, key, target, size):
        if isinstance(target, str):
            self.fs.get_file(remote(key), target)
        else:
            target.write(self.fs.cat_file(remote(key)))


if __name__ == "__main__":
    perfpeer.main(S3fs)
