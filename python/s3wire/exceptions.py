"""The exceptions s3wire raises for a store's errors and failed transfers.

Every error of a request or transfer is an :class:`S3WireError` (or a subclass); bad
arguments raise ``TypeError``, ``ValueError`` or ``FileNotFoundError`` naming the argument.
"""

from typing import Optional


class S3WireError(Exception):
    """A request or transfer failed.

    Attributes:
        code: the store's error code (``"NoSuchKey"``, ``"SlowDown"``, ...), or ``None``
            when the failure was not an answer of the store (a connection, a timeout, a
            checksum mismatch).
        status: the HTTP status of the store's answer, or ``None``.
        request_id: the store's request id (``x-amz-request-id``), for its support.
        hint: what to check or change, when the client knows (a wrong region, a clock
            skew, a missing permission), or ``None``.
    """

    def __init__(
        self,
        message: str,
        code: Optional[str] = None,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        hint: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} (hint: {self.hint})"


class NoSuchKey(S3WireError):
    """The object does not exist (``NoSuchKey``, or a 404 to a HEAD of an object)."""


class NoSuchBucket(S3WireError):
    """The bucket does not exist."""


class AccessDenied(S3WireError):
    """The credentials may not do this (``AccessDenied``, 403)."""


class PreconditionFailed(S3WireError):
    """A condition of the request did not hold (``If-Match``, ``If-None-Match``; 412)."""


__all__ = ["S3WireError", "NoSuchKey", "NoSuchBucket", "AccessDenied", "PreconditionFailed"]
