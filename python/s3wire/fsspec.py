"""An fsspec filesystem over s3wire, so pandas, pyarrow, dask and xarray read and write
objects through s3-wire.

It is registered for the protocol ``s3wire`` (``s3wire://bucket/key``) when s3wire is
installed; :func:`register_s3` makes it the filesystem of ``s3://`` too, in place of s3fs::

    import pandas as pd
    import s3wire.fsspec

    s3wire.fsspec.register_s3()
    frame = pd.read_parquet("s3://bucket/table.parquet")

Its options take s3fs's names where s3fs has one (``key``, ``secret``, ``token``,
``anon``, ``endpoint_url``, ``client_kwargs={"region_name": ...}``), so
``storage_options`` move over; anything else is given to :class:`s3wire.Client`.
"""

import os
import shutil
import tempfile
from typing import Any, Dict, List, Optional

import fsspec
from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

from s3wire import Client
from s3wire.exceptions import NoSuchBucket, NoSuchKey, PreconditionFailed, S3WireError


class S3WireFileSystem(AbstractFileSystem):
    """Buckets as top-level directories, ``/`` in keys as directory separators (S3 has no
    directories: a directory exists while an object is under it)."""

    protocol = ("s3wire", "s3", "s3a")
    root_marker = ""

    def __init__(
        self,
        key: Optional[str] = None,
        secret: Optional[str] = None,
        token: Optional[str] = None,
        anon: bool = False,
        endpoint_url: Optional[str] = None,
        client_kwargs: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> None:
        options = dict(client_kwargs or {})
        fsspec_options = {
            name: kwargs.pop(name)
            for name in ("skip_instance_cache", "use_listings_cache", "listings_expiry_time")
            if name in kwargs
        }
        super().__init__(**fsspec_options)
        options.update(kwargs)
        self.client = Client(
            endpoint_url=endpoint_url or options.pop("endpoint_url", None),
            region_name=options.pop("region_name", None),
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            aws_session_token=token,
            anonymous=anon,
            **options,
        )

    @staticmethod
    def _split(path: str):
        path = path.strip("/")
        bucket, _, key = path.partition("/")
        return bucket, key

    # Listing and metadata -------------------------------------------------------------

    def ls(self, path: str, detail: bool = True, **kwargs: Any):
        path = self._strip_protocol(path).rstrip("/")
        if not path:
            entries = [self._bucket_entry(name) for name in self.client.list_buckets()]
        else:
            bucket, key = self._split(path)
            prefix = key + "/" if key else ""
            entries = []
            try:
                for page in self.client.list(bucket, prefix, delimiter="/").pages():
                    for common in page["CommonPrefixes"]:
                        entries.append(self._directory_entry(bucket + "/" + common["Prefix"]))
                    for entry in page["Contents"]:
                        if entry["Key"] == prefix:
                            continue  # a "directory marker" object
                        entries.append(self._file_entry(bucket, entry))
            except NoSuchBucket as error:
                raise FileNotFoundError(path) from error
            if not entries:
                info = self.info(path)
                if info["type"] == "file":
                    entries = [info]
                elif key:
                    raise FileNotFoundError(path)
        return entries if detail else [entry["name"] for entry in entries]

    def info(self, path: str, **kwargs: Any) -> Dict[str, Any]:
        path = self._strip_protocol(path).rstrip("/")
        if not path:
            return self._directory_entry("")
        bucket, key = self._split(path)
        if not key:
            try:
                next(iter(self.client.list(bucket, page_size=1)), None)
            except NoSuchBucket as error:
                raise FileNotFoundError(path) from error
            return self._bucket_entry(bucket)
        try:
            head = self.client.head(bucket, key)
            return {
                "name": path,
                "size": head["ContentLength"],
                "type": "file",
                "ETag": head.get("ETag"),
                "LastModified": head.get("LastModified"),
                "ContentType": head.get("ContentType"),
            }
        except (NoSuchKey, NoSuchBucket):
            failed = None
        except S3WireError as error:
            # A store that keeps objects as files may fail a HEAD of a "directory" (s3s-fs
            # answers 500): it is one if objects are under it.
            failed = error
        try:
            under = next(iter(self.client.list(bucket, key.rstrip("/") + "/", page_size=1)), None)
        except NoSuchBucket as error:
            raise FileNotFoundError(path) from error
        if under is None:
            if failed is not None:
                raise failed
            raise FileNotFoundError(path)
        return self._directory_entry(path)

    def modified(self, path: str):
        info = self.info(path)
        if info["type"] != "file":
            raise IsADirectoryError(path)
        return info["LastModified"]

    @staticmethod
    def _file_entry(bucket: str, entry: Dict[str, Any]) -> Dict[str, Any]:
        return {
            "name": bucket + "/" + entry["Key"],
            "size": entry["Size"],
            "type": "file",
            "ETag": entry.get("ETag"),
            "LastModified": entry.get("LastModified"),
        }

    @staticmethod
    def _directory_entry(path: str) -> Dict[str, Any]:
        return {"name": path.rstrip("/"), "size": 0, "type": "directory"}

    _bucket_entry = _directory_entry

    # Whole objects --------------------------------------------------------------------

    def cat_file(self, path: str, start: Optional[int] = None, end: Optional[int] = None, **kwargs):
        bucket, key = self._split(self._strip_protocol(path))
        if start is None and end is None:
            return self._get(bucket, key)
        size = None
        if (start is not None and start < 0) or (end is not None and end < 0) or end is None:
            size = self.info(path)["size"]
        start = 0 if start is None else (max(size + start, 0) if start < 0 else start)
        end = size if end is None else (max(size + end, 0) if end < 0 else end)
        if size is not None:
            end = min(end, size)
        if end <= start:
            return b""
        return self._get(bucket, key, range=(start, end - 1))

    def _get(self, bucket: str, key: str, **options: Any) -> bytes:
        try:
            return self.client.get(bucket, key, **options)
        except (NoSuchKey, NoSuchBucket) as error:
            raise FileNotFoundError(f"{bucket}/{key}") from error

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        """Stores ``value``; with ``mode="create"`` only if nothing is stored there yet
        (``If-None-Match: *``), raising ``FileExistsError`` otherwise."""
        bucket, key = self._split(self._strip_protocol(path))
        try:
            self.client.put(bucket, key, value, if_none_match=mode == "create")
        except PreconditionFailed as error:
            raise FileExistsError(path) from error

    def put_file(self, lpath: str, rpath: str, callback=None, **kwargs: Any) -> None:
        if os.path.isdir(lpath):
            self.makedirs(rpath, exist_ok=True)
            return
        bucket, key = self._split(self._strip_protocol(rpath))
        self.client.upload_file(lpath, bucket, key)

    def get_file(self, rpath: str, lpath: str, callback=None, outfile=None, **kwargs: Any) -> None:
        if self.isdir(rpath):
            os.makedirs(lpath, exist_ok=True)
            return
        bucket, key = self._split(self._strip_protocol(rpath))
        lpath = os.fspath(lpath)
        os.makedirs(os.path.dirname(lpath) or ".", exist_ok=True)
        try:
            self.client.download_file(bucket, key, lpath)
        except (NoSuchKey, NoSuchBucket) as error:
            raise FileNotFoundError(rpath) from error

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        source_bucket, source_key = self._split(self._strip_protocol(path1))
        bucket, key = self._split(self._strip_protocol(path2))
        try:
            self.client.copy(source_bucket, source_key, bucket, key)
        except (NoSuchKey, NoSuchBucket) as error:
            raise FileNotFoundError(path1) from error

    # Removal and directories ----------------------------------------------------------

    def rm_file(self, path: str) -> None:
        bucket, key = self._split(self._strip_protocol(path))
        self.client.delete(bucket, key)

    def rm(self, path, recursive: bool = False, maxdepth: Optional[int] = None) -> None:
        paths = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
        # The directories among them are the parents of others: only objects are deleted.
        parents = {entry.rsplit("/", depth)[0] for entry in paths for depth in range(1, entry.count("/") + 1)}
        by_bucket: Dict[str, List[str]] = {}
        for entry in paths:
            if entry in parents:
                continue
            bucket, key = self._split(entry)
            if key:
                by_bucket.setdefault(bucket, []).append(key)
        for bucket, keys in by_bucket.items():
            refused = self.client.delete_many(bucket, keys)
            if refused:
                raise OSError(f"{len(refused)} objects not deleted: {refused[:3]}")

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        bucket, key = self._split(self._strip_protocol(path))
        if not key:
            try:
                self.client.create_bucket(bucket)
            except Exception as error:  # the store's "already exists" codes differ
                if getattr(error, "code", None) not in (
                    "BucketAlreadyOwnedByYou",
                    "BucketAlreadyExists",
                ):
                    raise

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        self.mkdir(path)

    def rmdir(self, path: str) -> None:
        bucket, key = self._split(self._strip_protocol(path))
        if not key:
            self.client.delete_bucket(bucket)

    # Files ------------------------------------------------------------------------------

    def _open(self, path: str, mode: str = "rb", block_size=None, autocommit=True, cache_options=None, **kwargs):
        if "x" in mode and self.exists(path):
            raise FileExistsError(path)
        return S3WireFile(
            self,
            path,
            mode,
            block_size=block_size or self.blocksize,
            autocommit=autocommit,
            cache_options=cache_options,
            **kwargs,
        )


class S3WireFile(AbstractBufferedFile):
    """Reads by ranged GETs (fsspec's read-ahead caches on top); writes spool to a local
    temporary file past the first block and are uploaded when the file is closed
    (multipart when large, parts read in place)."""

    def _fetch_range(self, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        bucket, key = self.fs._split(self.path)
        try:
            return self.fs.client.get(bucket, key, range=(start, end - 1))
        except (NoSuchKey, NoSuchBucket) as error:
            raise FileNotFoundError(self.path) from error

    def _initiate_upload(self) -> None:
        self._spool = tempfile.TemporaryFile()

    def _upload_chunk(self, final: bool = False) -> bool:
        self.buffer.seek(0)
        if not hasattr(self, "_spool"):
            self._initiate_upload()
        shutil.copyfileobj(self.buffer, self._spool)
        if final:
            self._spool.seek(0)
            bucket, key = self.fs._split(self.path)
            self.fs.client.upload_fileobj(self._spool, bucket, key)
            self._spool.close()
        return True

    def discard(self) -> None:
        spool = getattr(self, "_spool", None)
        if spool is not None:
            spool.close()


def register_s3() -> None:
    """Makes :class:`S3WireFileSystem` the filesystem of ``s3://`` (and ``s3a://``) for
    fsspec and everything that opens paths through it (pandas, dask, xarray)."""
    fsspec.register_implementation("s3", S3WireFileSystem, clobber=True)
    fsspec.register_implementation("s3a", S3WireFileSystem, clobber=True)


fsspec.register_implementation("s3wire", S3WireFileSystem, clobber=True)

__all__ = ["S3WireFile", "S3WireFileSystem", "register_s3"]
