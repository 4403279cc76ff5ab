"""The client's options, each seen at work: a proxy (every request through it, which also
proves the GIL is released while bytes move: the proxy is Python threads of this process),
requester pays and anonymous requests (their headers as the proxy saw them), a CA bundle
(TLS to a certificate of a private CA), retries (attempts counted by the server), the
memory budget of transfers (its high-water mark) and the sync of downloaded files (the
`fsync` calls strace sees)."""

import base64
import faulthandler
import hashlib
import io
import json
import shutil
import subprocess
import sys
import time
from urllib.parse import urlsplit

import crc32c
import pytest

import s3wire
from conftest import data
from servers import Failing, ForwardProxy, TlsRelay, make_ca_and_server_cert

MiB = 1024 * 1024
# A name only the proxy knows (no dot: moto takes it for path-style addressing): the
# client must not resolve it (nor take it for loopback,
# which is called directly whatever the proxy).
PROXIED_HOST = "s3wire-proxied"


@pytest.fixture(autouse=True)
def watchdog():
    """A call that kept the GIL would stop the in-process servers and hang: end the run
    with every thread's traceback instead."""
    faulthandler.dump_traceback_later(180, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def origin_port(options):
    return urlsplit(options["endpoint_url"]).port


def test_everything_goes_through_the_proxy_with_the_gil_released(options, client, bucket, tmp_path):
    with ForwardProxy(origin_port(options)) as proxy:
        proxied = s3wire.Client(
            **dict(options, endpoint_url=f"http://{PROXIED_HOST}:{origin_port(options)}"),
            proxy=f"http://127.0.0.1:{proxy.port}",
            allow_http=True,
            requester_pays=True,
        )
        payload = data(2 * MiB + 3, seed=20)
        proxied.put(bucket, "via-proxy", payload)
        assert client.get(bucket, "via-proxy") == payload
        assert proxied.get(bucket, "via-proxy") == payload
        with proxied.get(bucket, "via-proxy", stream=True) as body:
            assert b"".join(iter(lambda: body.read(100_000), b"")) == payload

        source = tmp_path / "source"
        source.write_bytes(data(11 * MiB, seed=21))
        config = s3wire.TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=3)
        proxied.upload_file(str(source), bucket, "file", Config=config)
        proxied.download_file(bucket, "file", str(tmp_path / "back"), Config=config)
        assert (tmp_path / "back").read_bytes() == source.read_bytes()
        assert client.head(bucket, "file")["ContentLength"] == 11 * MiB

        requests = list(proxy.requests)
    # put, get, streamed get, a 3-part upload (create, 3 parts, complete), a download.
    assert len(requests) >= 9
    for method, url, headers in requests:
        assert url.startswith(f"http://{PROXIED_HOST}:{origin_port(options)}/{bucket}/"), url
        assert headers["host"] == f"{PROXIED_HOST}:{origin_port(options)}"
        assert headers["x-amz-request-payer"] == "requester", (method, url)
        assert headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert {method for method, _, _ in requests} >= {"PUT", "GET", "POST"}


def test_anonymous_requests_are_unsigned(server, options, client, bucket):
    client.put(bucket, "private", b"for the owner")
    if server[0] == "moto":
        # s3s-fs keeps no ACLs (compatibility.md); moto lets anyone read this one.
        client.upload_fileobj(io.BytesIO(b"for anyone"), bucket, "public", ExtraArgs={"ACL": "public-read"})
    with ForwardProxy(origin_port(options)) as proxy:
        anonymous = s3wire.Client(
            endpoint_url=f"http://{PROXIED_HOST}:{origin_port(options)}",
            region_name=options["region_name"],
            anonymous=True,
            proxy=f"http://127.0.0.1:{proxy.port}",
            allow_http=True,
            max_attempts=1,
        )
        with pytest.raises(s3wire.AccessDenied) as denied:
            anonymous.get(bucket, "private")
        assert denied.value.status == 403
        if server[0] == "moto":
            assert anonymous.get(bucket, "public") == b"for anyone"
        requests = list(proxy.requests)
    assert len(requests) == (2 if server[0] == "moto" else 1)
    for method, url, headers in requests:
        assert method == "GET"
        assert "authorization" not in headers
        assert "X-Amz-Signature" not in url


def test_a_ca_bundle_makes_a_private_ca_trusted(options, client, bucket, tmp_path):
    paths = make_ca_and_server_cert(tmp_path)
    client.put(bucket, "over-tls", b"secret bytes")
    with TlsRelay(origin_port(options), paths["server.pem"], paths["server.key"]) as relay:
        https = dict(options, endpoint_url=f"https://localhost:{relay.port}")
        trusted = s3wire.Client(**https, ca_bundle=str(paths["ca.pem"]), max_attempts=1)
        assert trusted.get(bucket, "over-tls") == b"secret bytes"
        trusted.put(bucket, "put-over-tls", b"x" * 100_000)
        assert client.get(bucket, "put-over-tls") == b"x" * 100_000
        assert relay.accepted >= 1

        untrusted = s3wire.Client(**https, max_attempts=1)
        with pytest.raises(s3wire.S3WireError) as refused:
            untrusted.get(bucket, "over-tls")
        assert refused.value.status is None
        assert "certificate" in str(refused.value).lower()
        # The relay's side of the refused handshake ends once the client hung up.
        deadline = time.monotonic() + 10
        while relay.refused < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert relay.refused >= 1


@pytest.mark.parametrize("attempts", [1, 4])
def test_max_attempts_is_the_number_of_tries(attempts):
    with Failing(503, "SlowDown") as failing:
        client = s3wire.Client(
            endpoint_url=f"http://127.0.0.1:{failing.port}",
            region_name="us-east-1",
            aws_access_key_id="id",
            aws_secret_access_key="secret",
            max_attempts=attempts,
        )
        with pytest.raises(s3wire.S3WireError) as failed:
            client.get("bucket", "key")
        assert failing.count == attempts
    assert failed.value.code == "SlowDown"
    assert failed.value.status == 503
    assert failed.value.request_id == f"req-{attempts}"
    with pytest.raises(ValueError, match="max_attempts"):
        s3wire.Client(max_attempts=0)


def test_invalid_options_are_refused_naming_them():
    with pytest.raises(ValueError, match="proxy"):
        s3wire.Client(endpoint_url="http://127.0.0.1:9", region_name="us-east-1", proxy="ftp://nowhere")
    with pytest.raises(ValueError, match="http"):
        s3wire.Client(endpoint_url="http://example.invalid", region_name="us-east-1", anonymous=True)
    with pytest.raises(TypeError, match="max_memory"):
        s3wire.Client(max_memory="lots")


def test_transfers_stay_within_the_memory_budget(options, bucket, tmp_path):
    budget = 12 * MiB
    client = s3wire.Client(**options, max_memory=budget)
    assert client.transfer_memory() == {"capacity": budget, "in_use": 0, "high_water": 0}
    source = tmp_path / "source"
    source.write_bytes(data(40 * MiB, seed=22))
    config = s3wire.TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=8)
    client.upload_file(str(source), bucket, "big", Config=config)
    client.download_file(bucket, "big", str(tmp_path / "back"), Config=config)
    assert (tmp_path / "back").read_bytes() == source.read_bytes()
    usage = client.transfer_memory()
    assert usage["in_use"] == 0
    # Parts were held (at least one 5 MiB part), never more than the budget at once.
    assert 5 * MiB <= usage["high_water"] <= budget


# Downloads in a process of its own, under strace: a file of one request and one of
# parallel ranges, to the paths given.
DOWNLOADS = """
import json, sys
import s3wire
options, bucket, paths = json.loads(sys.argv[1])
client = s3wire.Client(**options)
config = s3wire.TransferConfig(multipart_threshold=5 << 20, multipart_chunksize=5 << 20)
for key, path in paths.items():
    client.download_file(bucket, key, path, Config=config)
"""


@pytest.mark.parametrize("sync_files", [True, False])
def test_downloads_are_synced_unless_sync_files_is_off(options, client, bucket, tmp_path, sync_files):
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed: the fsync calls of a download cannot be seen")
    objects = {"small": data(100_000, seed=31), "ranged": data(12 * MiB, seed=32)}
    for key, body in objects.items():
        client.put(bucket, key, body)
    paths = {key: str(tmp_path / key) for key in objects}
    trace = tmp_path / "trace"
    arguments = json.dumps([dict(options, sync_files=sync_files), bucket, paths])
    subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", str(trace),
         sys.executable, "-c", DOWNLOADS, arguments],
        check=True, timeout=120,
    )
    for key, body in objects.items():
        assert (tmp_path / key).read_bytes() == body
    syncs = [line for line in trace.read_text().splitlines() if "fsync(" in line or "fdatasync(" in line]
    if sync_files:
        # Each file's data, then its directory after the rename: at least two per file.
        assert len(syncs) >= 2 * len(objects), syncs
    else:
        assert syncs == []


def test_extra_args_encryption_and_checksum_are_stored(server, client, bucket, tmp_path):
    payload = data(1 * MiB + 7, seed=23)
    source = tmp_path / "small"
    source.write_bytes(payload)
    expected = base64.b64encode(crc32c.crc32c(payload).to_bytes(4, "big")).decode()
    extra = {"ChecksumAlgorithm": "CRC32C"}
    if server[0] == "moto":
        # s3s-fs keeps no encryption settings (compatibility.md).
        extra["ServerSideEncryption"] = "AES256"
    client.upload_file(str(source), bucket, "small", ExtraArgs=extra)
    head = client.head(bucket, "small", checksum_mode=True)
    assert head["ChecksumCRC32C"] == expected
    if server[0] == "moto":
        assert head["ServerSideEncryption"] == "AES256"
    if server[0] == "moto":
        # Only asked for (s3s-fs sends it always).
        assert "ChecksumCRC32C" not in client.head(bucket, "small")

    # Multipart: the checksum of the parts' checksums.
    big = tmp_path / "big"
    payload = data(11 * MiB, seed=24)
    big.write_bytes(payload)
    config = s3wire.TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    client.upload_file(str(big), bucket, "big", ExtraArgs={"ChecksumAlgorithm": "SHA256"}, Config=config)
    if server[0] == "moto":
        # s3s-fs keeps no checksums of multipart objects (compatibility.md).
        parts = [payload[start : start + 5 * MiB] for start in range(0, len(payload), 5 * MiB)]
        composite = hashlib.sha256(b"".join(hashlib.sha256(part).digest() for part in parts)).digest()
        stored = client.head(bucket, "big", checksum_mode=True)["ChecksumSHA256"]
        assert stored.split("-")[0] == base64.b64encode(composite).decode()
    assert client.get(bucket, "big") == payload
    with pytest.raises(ValueError, match="ServerSideEncryption"):
        client.upload_file(str(source), bucket, "x", ExtraArgs={"ServerSideEncryption": "ROT13"})
