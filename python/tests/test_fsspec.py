"""s3wire.fsspec.S3WireFileSystem: fsspec's own abstract test suite, the filesystem's
operations, and pandas (parquet through pyarrow) and dask reading and writing through it."""

import importlib

import fsspec
import pytest
from fsspec.tests.abstract import AbstractCopyTests, AbstractFixtures, AbstractGetTests, AbstractOpenTests, AbstractPipeTests, AbstractPutTests

import s3wire.fsspec
from conftest import SERVERS, empty_and_delete, make_bucket


def storage_options(options):
    return {
        "endpoint_url": options["endpoint_url"],
        "key": options["aws_access_key_id"],
        "secret": options["aws_secret_access_key"],
        "client_kwargs": {"region_name": options["region_name"]},
        "skip_instance_cache": True,
    }


@pytest.fixture
def fs(options):
    return fsspec.filesystem("s3wire", **storage_options(options))


@pytest.fixture
def fs_bucket(fs):
    name = make_bucket(fs.client)
    yield name
    empty_and_delete(fs.client, name)


def test_operations(fs, fs_bucket, tmp_path):
    root = f"s3wire://{fs_bucket}"
    fs.pipe(f"{root}/dir/a.txt", b"alpha")
    fs.pipe(f"{root}/dir/sub/b.txt", b"beta")
    assert fs.cat(f"{root}/dir/a.txt") == b"alpha"
    assert fs.cat_file(f"{root}/dir/a.txt", start=1, end=3) == b"lp"
    assert fs.cat_file(f"{root}/dir/a.txt", start=-2) == b"ha"
    assert sorted(fs.ls(f"{root}/dir", detail=False)) == [f"{fs_bucket}/dir/a.txt", f"{fs_bucket}/dir/sub"]
    assert fs.info(f"{root}/dir/sub")["type"] == "directory"
    assert fs.info(f"{root}/dir/a.txt")["size"] == 5
    assert fs.find(root) == [f"{fs_bucket}/dir/a.txt", f"{fs_bucket}/dir/sub/b.txt"]
    assert not fs.exists(f"{root}/nothing")
    with pytest.raises(FileNotFoundError):
        fs.cat(f"{root}/nothing")

    with fs.open(f"{root}/written.bin", "wb", block_size=5 * 1024 * 1024) as out:
        for _ in range(12):
            out.write(b"x" * (1024 * 1024))
    with fs.open(f"{root}/written.bin", "rb") as back:
        back.seek(11 * 1024 * 1024)
        assert back.read() == b"x" * (1024 * 1024)
    assert fs.size(f"{root}/written.bin") == 12 * 1024 * 1024

    fs.cp(f"{root}/dir/a.txt", f"{root}/copy.txt")
    fs.get(f"{root}/dir", str(tmp_path / "local"), recursive=True)
    assert (tmp_path / "local" / "sub" / "b.txt").read_bytes() == b"beta"
    fs.put(str(tmp_path / "local"), f"{root}/uploaded", recursive=True)
    assert fs.cat(f"{root}/uploaded/sub/b.txt") == b"beta"
    fs.rm(f"{root}/dir", recursive=True)
    assert not fs.exists(f"{root}/dir/a.txt")


def test_pandas_and_dask_read_and_write_parquet(options, fs, fs_bucket):
    import dask.dataframe as dd
    import pandas as pd

    frame = pd.DataFrame({"part": [i % 3 for i in range(3000)], "value": range(3000), "name": [f"n{i}" for i in range(3000)]})
    so = storage_options(options)
    frame.to_parquet(f"s3wire://{fs_bucket}/table.parquet", storage_options=so)
    back = pd.read_parquet(f"s3wire://{fs_bucket}/table.parquet", storage_options=so)
    pd.testing.assert_frame_equal(back, frame)

    # s3:// through s3wire, by choice.
    s3wire.fsspec.register_s3()
    try:
        back = pd.read_parquet(f"s3://{fs_bucket}/table.parquet", storage_options=so)
        pd.testing.assert_frame_equal(back, frame)
    finally:
        registered = importlib.import_module("fsspec.registry")._registry
        registered.pop("s3", None)
        registered.pop("s3a", None)

    frame.to_parquet(f"s3wire://{fs_bucket}/dataset", partition_cols=["part"], storage_options=so)
    assert sorted(fs.ls(f"{fs_bucket}/dataset", detail=False)) == [f"{fs_bucket}/dataset/part={i}" for i in range(3)]
    dataset = dd.read_parquet(f"s3wire://{fs_bucket}/dataset", storage_options=so)
    assert dataset.npartitions >= 3
    computed = dataset.compute()
    assert len(computed) == 3000
    assert computed["value"].sum() == frame["value"].sum()
    assert sorted(computed.groupby("part", observed=True)["value"].count().tolist()) == [1000, 1000, 1000]


class TestFsspecAbstract(AbstractFixtures, AbstractCopyTests, AbstractGetTests, AbstractPutTests, AbstractOpenTests, AbstractPipeTests):
    """fsspec's abstract suite (fsspec.tests.abstract: copy, get, put, open, pipe) on moto,
    a fresh bucket for each test. Not on local-s3: s3s-fs keeps an object as a file and
    its key's prefixes as directories, which stay after their objects are deleted, and
    answers a HEAD of such a directory with a 500 (compatibility.md), which the suite's
    "rm then exists" steps run into; the filesystem's own tests above run on both."""

    @pytest.fixture
    def fs(self):
        fs = fsspec.filesystem("s3wire", **storage_options(SERVERS["moto"]))
        name = make_bucket(fs.client)
        fs._test_bucket = name
        yield fs
        empty_and_delete(fs.client, name)

    @pytest.fixture
    def fs_path(self, fs):
        return fs._test_bucket

    @pytest.fixture
    def supports_empty_directories(self):
        return False
