"""Objects through s3wire.Client on both servers: put, get (whole, ranged, streamed),
head, delete, delete_many, copy, list (lazy objects and pages), presign."""

import io
import threading
import urllib.request

import pytest

import s3wire
from conftest import data


def test_put_get_head_delete(client, bucket):
    payload = data(300_000)
    for body in (payload, bytearray(payload), memoryview(payload)):
        answer = client.put(bucket, "object", body, content_type="application/x-test", metadata={"origin": "pytest"})
        assert answer["ETag"]
        assert client.get(bucket, "object") == payload
    client.put(bucket, "text", "héllo")
    assert client.get(bucket, "text") == "héllo".encode()

    assert client.get(bucket, "object", range=(10, 19)) == payload[10:20]
    head = client.head(bucket, "object")
    assert head["ContentLength"] == len(payload)
    assert head["ContentType"] == "application/x-test"
    assert head["Metadata"] == {"origin": "pytest"}
    assert head["LastModified"].tzinfo is not None
    assert head["ETag"] == answer["ETag"]

    client.delete(bucket, "object")
    with pytest.raises(s3wire.NoSuchKey) as missing:
        client.get(bucket, "object")
    assert missing.value.code == "NoSuchKey"
    assert missing.value.status == 404
    with pytest.raises(s3wire.NoSuchKey):
        client.head(bucket, "object")


def test_streaming_body_reads_in_pieces_into_buffers_and_by_iteration(client, bucket):
    payload = data(3 * 1024 * 1024 + 17, seed=2)
    client.put(bucket, "big", payload)

    with client.get(bucket, "big", stream=True) as body:
        assert body.head["ContentLength"] == len(payload)
        first = body.read(1000)
        buffer = bytearray(70_001)
        n = body.readinto(buffer)
        rest = b"".join(body)
        assert first + bytes(buffer[:n]) + rest == payload
        assert body.read() == b""
    assert body.closed
    with pytest.raises(ValueError):
        body.read(1)

    # io wrappers take it as a raw stream.
    body = client.get(bucket, "big", stream=True)
    assert io.BufferedReader(body).read() == payload
    assert client.get(bucket, "big", stream=True).read() == payload


def test_listing_is_lazy_by_objects_and_by_pages(client, bucket):
    for i in range(25):
        client.put(bucket, f"list/{i:02}", b"x" * i)
    client.put(bucket, "list/sub/deeper", b"d")
    client.put(bucket, "elsewhere", b"e")

    listing = client.list(bucket, "list/", page_size=10)
    keys = [entry["Key"] for entry in listing]
    assert keys == [f"list/{i:02}" for i in range(25)] + ["list/sub/deeper"]

    pages = list(client.list(bucket, "list/", page_size=10).pages())
    assert [page["KeyCount"] for page in pages] == [10, 10, 6]
    assert [page["IsTruncated"] for page in pages] == [True, True, False]
    first = next(iter(client.list(bucket, "list/", page_size=1)))
    assert (first["Key"], first["Size"]) == ("list/00", 0)

    page = next(iter(client.list(bucket, "list/", delimiter="/").pages()))
    assert page["CommonPrefixes"] == [{"Prefix": "list/sub/"}]
    assert len(page["Contents"]) == 25


def test_delete_many_beyond_one_request_and_copy(client, bucket):
    keys = [f"many/{i:04}" for i in range(1005)]
    for key in keys:
        client.put(bucket, key, b"")
    assert client.delete_many(bucket, keys) == []
    assert list(client.list(bucket, "many/")) == []

    client.put(bucket, "source", b"copied", metadata={"kept": "yes"})
    client.copy(bucket, "source", bucket, "target")
    assert client.get(bucket, "target") == b"copied"
    assert client.head(bucket, "target")["Metadata"] == {"kept": "yes"}
    with pytest.raises(s3wire.NoSuchKey):
        client.copy(bucket, "absent", bucket, "target2")


def test_presigned_urls_work_without_credentials(client, bucket):
    client.put(bucket, "shared", b"presigned")
    url = client.presign(bucket, "shared", expires_in=300)
    assert "X-Amz-Signature=" in url
    with urllib.request.urlopen(url) as answer:
        assert answer.read() == b"presigned"

    put_url = client.presign(bucket, "uploaded", method="PUT")
    # A content type of its own: urllib would send a form type, which moto decodes as a form.
    request = urllib.request.Request(put_url, data=b"by url", method="PUT", headers={"Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(request) as answer:
        assert answer.status == 200
    assert client.get(bucket, "uploaded") == b"by url"


def test_the_gil_is_free_while_bytes_move(client, bucket):
    """Two downloads whose writers wait for each other: they can only meet if neither
    waiting call holds the GIL (otherwise the barrier times out)."""
    client.put(bucket, "a", data(2_000_000, seed=3))
    barrier = threading.Barrier(2, timeout=30)

    class Meeting(io.BytesIO):
        met = False

        def write(self, chunk):
            if not self.met:
                barrier.wait()
                self.met = True
            return super().write(chunk)

    outputs = [Meeting(), Meeting()]
    errors = []

    def download(output):
        try:
            client.download_fileobj(bucket, "a", output)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=download, args=(output,)) for output in outputs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert all(output.getvalue() == data(2_000_000, seed=3) for output in outputs)
