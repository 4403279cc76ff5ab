"""s3wire.AsyncClient: the same operations as awaitables, concurrent under asyncio, its
errors the same exceptions; a cancelled upload aborted."""

import asyncio
import time
import urllib.request

import pytest

import s3wire
from conftest import data

MiB = 1024 * 1024


def test_awaitables_run_concurrently_and_raise_typed_errors(options, client, bucket, tmp_path):
    async def scenario():
        aio = s3wire.AsyncClient(**options)
        payloads = {f"k{i}": data(100_000 + i, seed=i) for i in range(8)}
        await asyncio.gather(*(aio.put(bucket, key, body) for key, body in payloads.items()))
        got = await asyncio.gather(*(aio.get(bucket, key) for key in payloads))
        assert dict(zip(payloads, got)) == payloads
        assert (await aio.head(bucket, "k3"))["ContentLength"] == 100_003
        assert [entry["Key"] for entry in await aio.list(bucket)] == sorted(payloads)
        await aio.delete(bucket, "k0")
        with pytest.raises(s3wire.NoSuchKey):
            await aio.get(bucket, "k0")

        source = tmp_path / "file"
        source.write_bytes(data(6 * MiB, seed=9))
        await aio.upload_file(str(source), bucket, "file", ExtraArgs={"ContentType": "text/x-async"})
        await aio.download_file(bucket, "file", str(tmp_path / "back"))
        assert (tmp_path / "back").read_bytes() == source.read_bytes()
        assert (await aio.head(bucket, "file"))["ContentType"] == "text/x-async"

        assert await aio.get(bucket, "k1", range=(5, 9)) == payloads["k1"][5:10]
        await aio.put(bucket, "meta", b"m", content_type="text/x-m", metadata={"a": "b"})
        await aio.copy(bucket, "meta", bucket, "meta-copy")
        head = await aio.head(bucket, "meta-copy")
        assert (head["ContentType"], head["Metadata"]) == ("text/x-m", {"a": "b"})
        with pytest.raises(s3wire.PreconditionFailed):
            await aio.put(bucket, "meta", b"again", if_none_match=True)
        url = await aio.presign(bucket, "k2", expires_in=60)
        loop = asyncio.get_running_loop()
        fetched = await loop.run_in_executor(None, lambda: urllib.request.urlopen(url).read())
        assert fetched == payloads["k2"]
        assert await aio.delete_many(bucket, [f"k{i}" for i in range(1, 8)]) == []
        assert sorted(entry["Key"] for entry in await aio.list(bucket)) == ["file", "meta", "meta-copy"]
        with pytest.raises(ValueError, match="method"):
            await aio.presign(bucket, "k2", method="PATCH")

    asyncio.run(scenario())


def test_a_cancelled_upload_is_aborted(moto_options, boto3_moto, tmp_path):
    from conftest import empty_and_delete, make_bucket

    client = s3wire.Client(**moto_options)
    bucket = make_bucket(client)
    source = tmp_path / "big"
    source.write_bytes(data(48 * MiB, seed=10))

    async def scenario():
        aio = s3wire.AsyncClient(**moto_options)
        upload = asyncio.ensure_future(aio.upload_file(str(source), bucket, "big"))
        # Cancelled once its multipart upload exists.
        deadline = time.monotonic() + 30
        while not boto3_moto.list_multipart_uploads(Bucket=bucket).get("Uploads"):
            assert time.monotonic() < deadline, "no multipart upload started"
            await asyncio.sleep(0.02)
        upload.cancel()
        with pytest.raises(asyncio.CancelledError):
            await upload

    try:
        asyncio.run(scenario())
        # The abort runs in the background after the cancellation: bounded, and soon.
        deadline = time.monotonic() + 30
        while boto3_moto.list_multipart_uploads(Bucket=bucket).get("Uploads"):
            assert time.monotonic() < deadline, "the cancelled upload was not aborted"
            time.sleep(0.05)
        with pytest.raises(s3wire.NoSuchKey):
            client.head(bucket, "big")
    finally:
        empty_and_delete(client, bucket)
