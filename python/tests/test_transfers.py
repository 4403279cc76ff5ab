"""Managed transfers with boto3's names and argument order: upload_file, download_file,
upload_fileobj, download_fileobj (ExtraArgs, Callback, Config), the directories and sync;
Ctrl-C during a transfer, and during a call the store does not answer."""

import io
import os
import signal
import threading
import time

import pytest

import s3wire
from conftest import data
from servers import Silent

MiB = 1024 * 1024


def test_files_both_ways_with_extra_args_callback_and_config(client, bucket, tmp_path):
    payload = data(13 * MiB + 5, seed=4)
    source = tmp_path / "source"
    source.write_bytes(payload)
    increments = []
    config = s3wire.TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=2)
    client.upload_file(
        str(source),
        bucket,
        "file",
        ExtraArgs={"ContentType": "application/x-blob", "Metadata": {"a": "1"}, "ChecksumAlgorithm": "CRC32C", "CacheControl": "no-cache"},
        Callback=increments.append,
        Config=config,
    )
    assert sum(increments) == len(payload)
    assert all(step > 0 for step in increments)
    head = client.head(bucket, "file")
    assert head["ContentType"] == "application/x-blob"
    assert head["Metadata"] == {"a": "1"}
    assert head["CacheControl"] == "no-cache"
    assert head["ETag"].endswith('-3"'), head["ETag"]

    target = tmp_path / "target"
    downloaded = []
    client.download_file(bucket, "file", str(target), Callback=downloaded.append, Config=config)
    assert target.read_bytes() == payload
    assert sum(downloaded) == len(payload)
    # No temporary file left beside the target.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source", "target"]


def test_file_objects_both_ways(client, bucket):
    payload = data(9 * MiB, seed=5)
    increments = []
    client.upload_fileobj(io.BytesIO(payload), bucket, "stream", Callback=increments.append, Config=s3wire.TransferConfig(multipart_chunksize=5 * MiB))
    assert sum(increments) == len(payload)
    out = io.BytesIO()
    client.download_fileobj(bucket, "stream", out)
    assert out.getvalue() == payload

    # An object of up to 1 MiB is written once, by the calling thread (which holds the GIL
    # anyway); a larger one by worker threads as it arrives.
    class Threads(io.BytesIO):
        def __init__(self):
            super().__init__()
            self.writers = set()

        def write(self, chunk):
            self.writers.add(threading.get_ident())
            return super().write(chunk)

    client.put(bucket, "small", payload[:MiB])
    small = Threads()
    client.download_fileobj(bucket, "small", small)
    assert small.getvalue() == payload[:MiB]
    assert small.writers == {threading.get_ident()}
    large = Threads()
    client.download_fileobj(bucket, "stream", large)
    assert large.getvalue() == payload
    assert threading.get_ident() not in large.writers

    # A writer's failure is the download's, and a failed download writes nothing.
    class Full(io.RawIOBase):
        def writable(self):
            return True

        def write(self, chunk):
            raise OSError("no space left")

    with pytest.raises(s3wire.S3WireError, match="no space left"):
        client.download_fileobj(bucket, "small", Full())
    with pytest.raises(s3wire.S3WireError, match="no space left"):
        client.download_fileobj(bucket, "stream", Full())
    untouched = Threads()
    with pytest.raises(s3wire.NoSuchKey):
        client.download_fileobj(bucket, "absent", untouched)
    assert untouched.writers == set()

    # A file object is read from where it stands to its end, and left there: an io.BytesIO
    # (taken whole at once) as any other reader (a subclass, read by read calls).
    class Reader(io.BytesIO):
        pass

    for kind in (io.BytesIO, Reader):
        source = kind(b"skip:" + payload[:1000])
        source.seek(5)
        client.upload_fileobj(source, bucket, "from-the-position")
        assert source.tell() == 1005, kind
        assert client.get(bucket, "from-the-position") == payload[:1000], kind

    class Broken(io.RawIOBase):
        def readable(self):
            return True

        def read(self, n=-1):
            raise OSError("the disk went away")

    with pytest.raises(s3wire.S3WireError, match="the disk went away"):
        client.upload_fileobj(Broken(), bucket, "broken")
    with pytest.raises(s3wire.NoSuchKey):
        client.head(bucket, "broken")


def test_directories_and_sync(client, bucket, tmp_path):
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "one").write_bytes(b"one")
    (tree / "a" / "b" / "two").write_bytes(b"two")
    summary = client.upload_directory(str(tree), bucket, "tree/")
    assert summary["objects_transferred"] == 2
    assert sorted(entry["Key"] for entry in client.list(bucket, "tree/")) == ["tree/a/b/two", "tree/a/one"]

    copy = tmp_path / "copy"
    summary = client.download_directory(bucket, "tree/", str(copy))
    assert (copy / "a" / "b" / "two").read_bytes() == b"two"

    # Nothing changed: nothing to send. A new file, a removed one: sent, and deleted.
    assert client.sync(str(tree), f"s3://{bucket}/tree/")["objects_transferred"] == 0
    (tree / "three").write_bytes(b"three")
    (tree / "a" / "one").unlink()
    summary = client.sync(str(tree), f"s3://{bucket}/tree/", delete=True)
    assert (summary["objects_transferred"], summary["objects_deleted"]) == (1, 1)
    assert sorted(entry["Key"] for entry in client.list(bucket, "tree/")) == ["tree/a/b/two", "tree/three"]
    client.sync(f"s3://{bucket}/tree/", str(copy), delete=True)
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()) == ["a/b/two", "three"]
    with pytest.raises(ValueError, match="destination"):
        client.sync(str(tree), str(copy))


def _interrupt_after_first(increments):
    """A Callback that sends this process SIGINT (as Ctrl-C does) at its first call."""

    def callback(step):
        increments.append(step)
        if len(increments) == 1:
            threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()

    return callback


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raising KeyboardInterrupt, whatever this process inherited: Python installs
    that handler only when SIGINT had its default action at start, and a process started
    in the background by a shell (`cmd &`) starts with SIGINT ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_stops_a_call_the_store_does_not_answer():
    with Silent() as silent:
        client = s3wire.Client(
            endpoint_url=f"http://127.0.0.1:{silent.port}",
            region_name="us-east-1",
            aws_access_key_id="id",
            aws_secret_access_key="secret",
            max_attempts=1,
        )
        threading.Thread(target=lambda: silent.received.wait(10) and os.kill(os.getpid(), signal.SIGINT)).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            client.head("bucket", "key")
        assert time.monotonic() - started < 10
        # The request was dropped, not left waiting: its connection is closed.
        assert silent.closed.wait(10)


@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_aborts_an_upload_and_removes_a_partial_download(moto_options, boto3_moto, tmp_path):
    from conftest import empty_and_delete, make_bucket

    client = s3wire.Client(**moto_options)
    bucket = make_bucket(client)
    try:
        source = tmp_path / "big"
        source.write_bytes(data(40 * MiB, seed=6))
        config = s3wire.TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=2)
        increments = []
        with pytest.raises(KeyboardInterrupt):
            client.upload_file(str(source), bucket, "big", Callback=_interrupt_after_first(increments), Config=config)
        assert 0 < sum(increments) < 40 * MiB
        assert boto3_moto.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
        with pytest.raises(s3wire.NoSuchKey):
            client.head(bucket, "big")

        client.upload_file(str(source), bucket, "big", Config=config)
        target = tmp_path / "downloads" / "big"
        target.parent.mkdir()
        increments = []
        with pytest.raises(KeyboardInterrupt):
            client.download_file(bucket, "big", str(target), Callback=_interrupt_after_first(increments), Config=config)
        assert 0 < sum(increments) < 40 * MiB
        assert list(target.parent.iterdir()) == []
    finally:
        empty_and_delete(client, bucket)
