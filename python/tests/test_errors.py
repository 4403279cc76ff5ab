"""Errors as exceptions: the store's (code, status, request id, hint; the subclasses) and
bad arguments (TypeError, ValueError, FileNotFoundError naming the argument)."""

import pytest

import s3wire


def test_store_errors_are_typed_and_carry_their_details(server, client, bucket, options):
    with pytest.raises(s3wire.NoSuchBucket) as missing:
        list(client.list("s3wire-no-such-bucket"))
    assert missing.value.code == "NoSuchBucket"
    assert missing.value.status == 404
    assert isinstance(missing.value, s3wire.S3WireError)

    client.put(bucket, "once", b"first")
    with pytest.raises(s3wire.PreconditionFailed) as taken:
        client.put(bucket, "once", b"second", if_none_match=True)
    assert taken.value.status == 412
    assert client.get(bucket, "once") == b"first"

    wrong = s3wire.Client(**dict(options, aws_secret_access_key="not-the-secret"), max_attempts=1)
    if server[0] == "local-s3":
        with pytest.raises(s3wire.AccessDenied) as denied:
            wrong.get(bucket, "once")
        assert denied.value.status == 403
        assert denied.value.code == "SignatureDoesNotMatch"
    else:
        # moto checks no signature (its deviation): any secret reads the object.
        assert wrong.get(bucket, "once") == b"first"


def test_bad_arguments_name_the_argument(client, bucket, tmp_path):
    with pytest.raises(TypeError, match="bucket"):
        client.get(123, "key")
    with pytest.raises(ValueError, match="'bucket'"):
        client.get("Not A Bucket!", "key")
    with pytest.raises(ValueError, match="'key'"):
        client.get(bucket, "")
    with pytest.raises(TypeError, match="'body'"):
        client.put(bucket, "key", 42)
    with pytest.raises(FileNotFoundError, match="Filename"):
        client.upload_file(str(tmp_path / "absent"), bucket, "key")
    with pytest.raises(FileNotFoundError, match="Filename"):
        client.download_file(bucket, "key", str(tmp_path / "no" / "such" / "dir" / "file"))
    (tmp_path / "present").write_bytes(b"x")
    with pytest.raises(ValueError, match="ExtraArgs"):
        client.upload_file(str(tmp_path / "present"), bucket, "key", ExtraArgs={"Bogus": 1})
    with pytest.raises(ValueError, match="ChecksumAlgorithm"):
        client.upload_file(str(tmp_path / "present"), bucket, "key", ExtraArgs={"ChecksumAlgorithm": "MD6"})
    with pytest.raises(TypeError, match="Fileobj"):
        client.upload_fileobj(42, bucket, "key")
    with pytest.raises(ValueError, match="aws_secret_access_key"):
        s3wire.Client(aws_access_key_id="only-the-id")
    with pytest.raises(ValueError, match="method"):
        client.presign(bucket, "key", method="PATCH")
    with pytest.raises(ValueError, match="page_size"):
        client.list(bucket, page_size=0)
    with pytest.raises(FileNotFoundError, match="ca_bundle"):
        s3wire.Client(ca_bundle=str(tmp_path / "absent.pem"))
    # Nothing was stored by the refused calls.
    assert list(client.list(bucket)) == []
