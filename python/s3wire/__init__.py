"""s3wire: s3-wire's S3 client for Python.

A Rust engine behind boto3's transfer names: ``Client`` (blocking, thread-safe) and
``AsyncClient`` (asyncio awaitables) from the standard AWS environment or explicit options;
objects (``get``, ``put``, ``head``, ``delete``, ``delete_many``, ``copy``, ``list``,
``presign``); managed transfers with boto3's names and argument order (``upload_file``,
``download_file``, ``upload_fileobj``, ``download_fileobj``) and directories
(``upload_directory``, ``download_directory``, ``sync``); an fsspec filesystem
(``s3wire.fsspec``). The GIL is released while bytes move; Ctrl-C stops a transfer and
cleans up after it.
"""

from s3wire._s3wire import AsyncClient, Client, Listing, Pages, StreamingBody
from s3wire.exceptions import (
    AccessDenied,
    NoSuchBucket,
    NoSuchKey,
    PreconditionFailed,
    S3WireError,
)


class TransferConfig:
    """s3transfer's ``TransferConfig`` settings s3wire reads (an s3transfer or boto3
    ``TransferConfig`` works as well): parts of ``multipart_chunksize`` bytes,
    ``max_concurrency`` at once, multipart from ``multipart_threshold`` bytes. ``None``
    keeps s3-wire's defaults (8 MiB parts, 8 at once, one request up to 16 MiB)."""

    def __init__(self, multipart_threshold=None, multipart_chunksize=None, max_concurrency=None):
        self.multipart_threshold = multipart_threshold
        self.multipart_chunksize = multipart_chunksize
        self.max_concurrency = max_concurrency


__all__ = [
    "AccessDenied",
    "AsyncClient",
    "Client",
    "Listing",
    "NoSuchBucket",
    "NoSuchKey",
    "Pages",
    "PreconditionFailed",
    "S3WireError",
    "StreamingBody",
    "TransferConfig",
]
