"""obstore peer of tools/perf (Python bindings of the Rust object_store crate): one
workload per process, JSON result lines, the protocol spoken by
../python-common/perfpeer.py. obstore's own API on one S3Store: obstore.put (multipart
with its chunk_size / max_concurrency), obstore.get and its stream, obstore.get_range,
obstore.head, obstore.list. See README.md.
"""

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import obstore
from obstore.store import S3Store

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))
import perfpeer  # noqa: E402

# The ranged download: object_store has no download manager (as the Rust object_store
# peer, comparisons/perf-peers/object_store).
RANGE_SIZE = 8 << 20
RANGES_IN_FLIGHT = 4


class Obstore(perfpeer.Peer):
    def __init__(self, args, pool=10):
        super().__init__(args)
        options = {"allow_http": True}
        if args.ca_file:
            with open(args.ca_file, "rb") as f:
                options["root_certificate"] = f.read()
        self.store = S3Store(
            perfpeer.BUCKET,
            endpoint=args.endpoint,
            region=perfpeer.REGION,
            access_key_id=args.access_key,
            secret_access_key=args.secret_key,
            virtual_hosted_style_request=False,
            client_options=options,
        )

    def put(self, key, data):
        obstore.put(self.store, key, data, use_multipart=False)

    def get(self, key):
        got = 0
        for chunk in obstore.get(self.store, key).stream(min_chunk_size=1 << 20):
            got += len(chunk)
        return got

    def upload(self, path, key, part_size, concurrency):
        if part_size:
            obstore.put(self.store, key, Path(path), use_multipart=True,
                        chunk_size=part_size, max_concurrency=concurrency)
        else:
            obstore.put(self.store, key, Path(path))

    def download(self, key, path, size):
        """get_range over 8 MiB ranges, 4 at once, each written at its offset (one range
        on the calling thread when the object fits in one)."""
        with open(path, "wb") as f:
            f.truncate(size)
            fd = f.fileno()

            def one(start):
                end = min(start + RANGE_SIZE, size)
                data = obstore.get_range(self.store, key, start=start, end=end)
                assert len(data) == end - start, (key, start, len(data))
                os.pwrite(fd, data, start)

            starts = range(0, size, RANGE_SIZE)
            if len(starts) == 1:
                one(0)
                return
            with ThreadPoolExecutor(RANGES_IN_FLIGHT) as pool:
                for _ in pool.map(one, starts):
                    pass

    def small_put(self, key, data):
        obstore.put(self.store, key, data)

    def small_get(self, key):
        return obstore.get(self.store, key).bytes()

    def small_head(self, key):
        obstore.head(self.store, key)

    def list_count(self, prefix):
        return sum(len(chunk) for chunk in obstore.list(self.store, prefix=prefix.rstrip("/")))

    def tasks(self, jobs, concurrency):
        self.pooled(jobs, concurrency, self.task_upload, self.task_download)

    def task_upload(self, key, source):
        obstore.put(self.store, key, Path(source) if isinstance(source, str) else source)

    def task_download(self, key, target, size):
        if isinstance(target, str):
            self.download(key, target, size)
        else:
            for chunk in obstore.get(self.store, key).stream(min_chunk_size=1 << 20):
                target.write(chunk)


if __name__ == "__main__":
    perfpeer.main(Obstore)
