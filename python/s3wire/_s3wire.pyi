"""Type stubs of s3wire's native module (src/*.rs). tests/test_stubs.py checks them against
the built module: every class and method here exists there with the same parameters."""

import os
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import IO, Any, Literal, Optional, Protocol, TypedDict, Union

from typing_extensions import Buffer, NotRequired, Self

_Path = Union[str, "os.PathLike[str]"]
_Body = Union[bytes, bytearray, memoryview, str]
_Method = Literal["GET", "PUT", "HEAD", "DELETE"]

class _TransferConfig(Protocol):
    """s3wire.TransferConfig, or boto3's / s3transfer's ``TransferConfig``: the
    attributes read (``None`` keeps s3-wire's default)."""

    multipart_threshold: Optional[int]
    multipart_chunksize: Optional[int]
    max_concurrency: Optional[int]

class PutAnswer(TypedDict):
    ETag: Optional[str]
    VersionId: Optional[str]

class Head(TypedDict):
    """HeadObject's answer under boto3's ``head_object`` names."""

    ContentLength: Optional[int]
    ETag: Optional[str]
    Metadata: dict[str, str]
    LastModified: NotRequired[datetime]
    ContentType: NotRequired[str]
    CacheControl: NotRequired[str]
    ContentDisposition: NotRequired[str]
    ContentEncoding: NotRequired[str]
    ContentLanguage: NotRequired[str]
    VersionId: NotRequired[str]
    ServerSideEncryption: NotRequired[str]
    SSEKMSKeyId: NotRequired[str]
    ChecksumCRC32: NotRequired[str]
    ChecksumCRC32C: NotRequired[str]
    ChecksumCRC64NVME: NotRequired[str]
    ChecksumSHA1: NotRequired[str]
    ChecksumSHA256: NotRequired[str]
    ChecksumType: NotRequired[str]
    PartsCount: NotRequired[int]
    StorageClass: NotRequired[str]
    RequestId: NotRequired[str]

class ListedObject(TypedDict):
    """One entry of a listing (boto3's ``Contents`` entries)."""

    Key: str
    Size: int
    ETag: Optional[str]
    LastModified: NotRequired[datetime]
    StorageClass: Optional[str]

class CommonPrefix(TypedDict):
    Prefix: str

class Page(TypedDict):
    """One ListObjectsV2 page, as boto3's ``list_objects_v2`` answers."""

    KeyCount: int
    Contents: list[ListedObject]
    CommonPrefixes: list[CommonPrefix]
    IsTruncated: bool
    NextContinuationToken: Optional[str]

class RefusedKey(TypedDict):
    Key: str
    Code: str
    Message: str

class DirectorySummary(TypedDict):
    objects_transferred: int
    objects_skipped: int
    objects_failed: int
    objects_deleted: int
    bytes_transferred: int

class MemoryUsage(TypedDict):
    capacity: int
    in_use: int
    high_water: int

class StreamingBody:
    """A file-like object body (``get(..., stream=True)``): ``read(n)``,
    ``readinto(buffer)``, iteration over chunks, ``close()``, a context manager. ``head``
    holds the object's head. Reads release the GIL."""

    @property
    def head(self) -> Head: ...
    @property
    def closed(self) -> bool: ...
    def read(self, size: int = -1) -> bytes: ...
    def readinto(self, buffer: Buffer) -> int: ...
    def readable(self) -> bool: ...
    def close(self) -> None: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> bytes: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, _kind: Any, _value: Any, _traceback: Any) -> None: ...

class Listing:
    """The objects under a prefix, each page requested as iteration reaches it."""

    def pages(self) -> Pages: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> ListedObject: ...

class Pages:
    """The pages of a listing, lazily."""

    def __iter__(self) -> Self: ...
    def __next__(self) -> Page: ...

class Client:
    """A blocking S3 client, thread-safe. Settings come from the standard AWS environment
    (``AWS_*`` variables, ``~/.aws`` files); what is given here takes precedence.

    ``max_attempts`` is the number of tries of a request (retries included),
    ``max_memory`` the bytes all managed transfers of the client hold at once,
    ``allow_http`` permits a plain-HTTP endpoint that is not a loopback address,
    ``sync_files=False`` ends a download to a file once its bytes are in the page cache,
    without syncing it to storage (faster for many small files; a crash of the machine
    soon after may lose it)."""

    def __init__(
        self,
        endpoint_url: Optional[str] = None,
        region_name: Optional[str] = None,
        aws_access_key_id: Optional[str] = None,
        aws_secret_access_key: Optional[str] = None,
        aws_session_token: Optional[str] = None,
        *,
        anonymous: bool = False,
        requester_pays: bool = False,
        ca_bundle: Optional[_Path] = None,
        proxy: Optional[str] = None,
        max_attempts: Optional[int] = None,
        max_memory: Optional[int] = None,
        allow_http: bool = False,
        sync_files: bool = True,
    ) -> None: ...
    def get(
        self,
        bucket: str,
        key: str,
        *,
        stream: bool = False,
        range: Optional[tuple[int, int]] = None,
        version_id: Optional[str] = None,
    ) -> Any:
        """The object's bytes, or with ``stream=True`` a :class:`StreamingBody`."""
    def put(
        self,
        bucket: str,
        key: str,
        body: _Body,
        *,
        content_type: Optional[str] = None,
        metadata: Optional[dict[str, str]] = None,
        if_none_match: bool = False,
    ) -> PutAnswer: ...
    def head(
        self,
        bucket: str,
        key: str,
        *,
        version_id: Optional[str] = None,
        checksum_mode: bool = False,
    ) -> Head: ...
    def delete(self, bucket: str, key: str) -> None: ...
    def delete_many(self, bucket: str, keys: list[str]) -> list[RefusedKey]: ...
    def copy(self, source_bucket: str, source_key: str, bucket: str, key: str) -> None: ...
    def list(
        self,
        bucket: str,
        prefix: str = "",
        *,
        delimiter: Optional[str] = None,
        start_after: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> Listing: ...
    def presign(
        self, bucket: str, key: str, *, method: _Method = "GET", expires_in: int = 3600
    ) -> str: ...
    def list_buckets(self) -> list[str]: ...
    def create_bucket(self, bucket: str) -> None: ...
    def delete_bucket(self, bucket: str) -> None: ...
    def upload_file(
        self,
        Filename: _Path,
        Bucket: str,
        Key: str,
        ExtraArgs: Optional[dict[str, Any]] = None,
        Callback: Optional[Callable[[int], Any]] = None,
        Config: Optional[_TransferConfig] = None,
    ) -> None: ...
    def upload_fileobj(
        self,
        Fileobj: IO[bytes],
        Bucket: str,
        Key: str,
        ExtraArgs: Optional[dict[str, Any]] = None,
        Callback: Optional[Callable[[int], Any]] = None,
        Config: Optional[_TransferConfig] = None,
    ) -> None: ...
    def download_file(
        self,
        Bucket: str,
        Key: str,
        Filename: _Path,
        ExtraArgs: Optional[dict[str, Any]] = None,
        Callback: Optional[Callable[[int], Any]] = None,
        Config: Optional[_TransferConfig] = None,
    ) -> None: ...
    def download_fileobj(
        self,
        Bucket: str,
        Key: str,
        Fileobj: IO[bytes],
        ExtraArgs: Optional[dict[str, Any]] = None,
        Callback: Optional[Callable[[int], Any]] = None,
        Config: Optional[_TransferConfig] = None,
    ) -> None: ...
    def upload_directory(self, directory: _Path, bucket: str, prefix: str = "") -> DirectorySummary: ...
    def download_directory(self, bucket: str, prefix: str, directory: _Path) -> DirectorySummary: ...
    def sync(self, source: str, destination: str, *, delete: bool = False) -> DirectorySummary: ...
    def transfer_memory(self) -> MemoryUsage: ...

class AsyncClient:
    """The asyncio client: ``Client``'s settings; each method returns an awaitable.
    Cancelling the awaiting task cancels the request or transfer (a multipart upload is
    aborted)."""

    def __init__(
        self,
        endpoint_url: Optional[str] = None,
        region_name: Optional[str] = None,
        aws_access_key_id: Optional[str] = None,
        aws_secret_access_key: Optional[str] = None,
        aws_session_token: Optional[str] = None,
        *,
        anonymous: bool = False,
        requester_pays: bool = False,
        ca_bundle: Optional[_Path] = None,
        proxy: Optional[str] = None,
        max_attempts: Optional[int] = None,
        max_memory: Optional[int] = None,
        allow_http: bool = False,
        sync_files: bool = True,
    ) -> None: ...
    async def get(
        self,
        bucket: str,
        key: str,
        *,
        range: Optional[tuple[int, int]] = None,
        version_id: Optional[str] = None,
    ) -> bytes: ...
    async def put(
        self,
        bucket: str,
        key: str,
        body: _Body,
        *,
        content_type: Optional[str] = None,
        metadata: Optional[dict[str, str]] = None,
        if_none_match: bool = False,
    ) -> PutAnswer: ...
    async def head(
        self,
        bucket: str,
        key: str,
        *,
        version_id: Optional[str] = None,
        checksum_mode: bool = False,
    ) -> Head: ...
    async def delete(self, bucket: str, key: str) -> None: ...
    async def delete_many(self, bucket: str, keys: list[str]) -> list[RefusedKey]: ...
    async def copy(self, source_bucket: str, source_key: str, bucket: str, key: str) -> None: ...
    async def list(self, bucket: str, prefix: str = "") -> list[ListedObject]: ...
    async def presign(
        self, bucket: str, key: str, *, method: _Method = "GET", expires_in: int = 3600
    ) -> str: ...
    async def upload_file(
        self,
        Filename: _Path,
        Bucket: str,
        Key: str,
        ExtraArgs: Optional[dict[str, Any]] = None,
    ) -> None: ...
    async def download_file(self, Bucket: str, Key: str, Filename: _Path) -> None: ...
