"""The servers and clients of the s3wire tests.

The servers are started by the test that runs this suite (`cargo test -p
s3wire-python-tests`, tools/python-tests/tests/pytest.rs): local-s3 (s3s-fs) and moto
5.2.5, both on 127.0.0.1, named in ``S3WIRE_TEST_SERVERS`` as
``name=endpoint,access_key,secret_key,region;...``. Every test that takes the ``client``
fixture runs once per server.
"""

import os
import uuid

import pytest

import s3wire


def _servers():
    spec = os.environ.get("S3WIRE_TEST_SERVERS")
    if not spec:
        raise RuntimeError(
            "S3WIRE_TEST_SERVERS is not set: run this suite through "
            "`cargo test -p s3wire-python-tests`, which starts local-s3 and moto for it"
        )
    servers = {}
    for part in spec.split(";"):
        name, values = part.split("=", 1)
        endpoint, access_key, secret_key, region = values.split(",")
        servers[name] = {
            "endpoint_url": endpoint,
            "aws_access_key_id": access_key,
            "aws_secret_access_key": secret_key,
            "region_name": region,
        }
    return servers


SERVERS = _servers()


@pytest.fixture(params=sorted(SERVERS))
def server(request):
    """(name, client options) of each server in turn."""
    return request.param, SERVERS[request.param]


@pytest.fixture
def options(server):
    return dict(server[1])


@pytest.fixture
def client(options):
    return s3wire.Client(**options, max_attempts=3)


def make_bucket(client):
    name = "s3wire-" + uuid.uuid4().hex[:16]
    client.create_bucket(name)
    return name


def empty_and_delete(client, name):
    keys = [entry["Key"] for entry in client.list(name)]
    if keys:
        client.delete_many(name, keys)
    client.delete_bucket(name)


@pytest.fixture
def bucket(client):
    """A new bucket, emptied and deleted after the test."""
    name = make_bucket(client)
    yield name
    empty_and_delete(client, name)


@pytest.fixture
def moto_options():
    return dict(SERVERS["moto"])


@pytest.fixture
def boto3_moto(moto_options):
    """boto3 on moto, to look at what s3wire left behind (multipart uploads)."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=moto_options["endpoint_url"],
        aws_access_key_id=moto_options["aws_access_key_id"],
        aws_secret_access_key=moto_options["aws_secret_access_key"],
        region_name=moto_options["region_name"],
    )


def data(size, seed=1):
    """`size` pseudo-random bytes, the same for the same seed."""
    import random

    return random.Random(seed).randbytes(size)
