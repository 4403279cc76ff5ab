"""boto3's side of tests/interop_boto3.rs: reads a JSON request on standard input, runs its
actions with boto3 against the given endpoint (127.0.0.1 only) and prints one JSON result
per action. Observations are reported, not judged: the Rust test asserts them.

Request: {"endpoint", "access_key", "secret_key", "region", "actions": [...]}, each action
{"op": ..., ...}:
- "read": bucket, key -> GetObject (checksum mode on: botocore verifies a full-object
  checksum itself) and HeadObject: size, sha256, etag, metadata, content headers, checksums.
- "write": bucket, key, file, checksum (algorithm or null), metadata, content headers.
- "write_multipart": bucket, key, file, part_size, checksum, checksum_type (FULL_OBJECT or
  COMPOSITE) -> the low-level multipart calls with part checksums.
- "presign": bucket, key, method ("get_object" / "put_object") -> url.
- "fetch": url, method ("GET" / "PUT"), file (PUT body), headers -> status, sha256 of the
  answer (plain urllib, no boto3).
- "list": bucket, prefix -> keys (boto3 decodes encoding-type=url itself).
"""

import hashlib
import json
import sys
import urllib.request

import boto3
import botocore.config

CHECKSUM_FIELDS = ["ChecksumCRC32", "ChecksumCRC32C", "ChecksumCRC64NVME", "ChecksumSHA1",
                   "ChecksumSHA256", "ChecksumType"]
CONTENT_FIELDS = ["ContentType", "ContentDisposition", "ContentEncoding", "ContentLanguage",
                  "CacheControl"]


def client(request):
    return boto3.client(
        "s3",
        endpoint_url=request["endpoint"],
        aws_access_key_id=request["access_key"],
        aws_secret_access_key=request["secret_key"],
        region_name=request["region"],
        config=botocore.config.Config(
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_supported",
            proxies={},
        ),
    )


def described(answer):
    out = {field: answer.get(field) for field in CHECKSUM_FIELDS + CONTENT_FIELDS}
    out["ETag"] = answer.get("ETag")
    out["Metadata"] = answer.get("Metadata", {})
    out["ContentLength"] = answer.get("ContentLength")
    return out


def read(s3, action):
    got = s3.get_object(Bucket=action["bucket"], Key=action["key"], ChecksumMode="ENABLED")
    body = got["Body"].read()
    head = s3.head_object(Bucket=action["bucket"], Key=action["key"], ChecksumMode="ENABLED")
    return {
        "size": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "get": described(got),
        "head": described(head),
    }


def object_args(action):
    args = {"Bucket": action["bucket"], "Key": action["key"]}
    if action.get("metadata"):
        args["Metadata"] = action["metadata"]
    for field in CONTENT_FIELDS:
        if action.get(field):
            args[field] = action[field]
    return args


def write(s3, action):
    with open(action["file"], "rb") as f:
        data = f.read()
    args = object_args(action)
    if action.get("checksum"):
        args["ChecksumAlgorithm"] = action["checksum"]
    answer = s3.put_object(Body=data, **args)
    return described(answer)


def write_multipart(s3, action):
    with open(action["file"], "rb") as f:
        data = f.read()
    args = object_args(action)
    algorithm = action["checksum"]
    created = s3.create_multipart_upload(
        ChecksumAlgorithm=algorithm, ChecksumType=action["checksum_type"], **args
    )
    size = action["part_size"]
    parts = []
    for number, offset in enumerate(range(0, len(data), size), start=1):
        answer = s3.upload_part(
            Bucket=action["bucket"], Key=action["key"], UploadId=created["UploadId"],
            PartNumber=number, Body=data[offset:offset + size], ChecksumAlgorithm=algorithm,
        )
        part = {"PartNumber": number, "ETag": answer["ETag"]}
        field = "Checksum" + algorithm
        if answer.get(field) and action["checksum_type"] == "COMPOSITE":
            part[field] = answer[field]
        parts.append(part)
    extra = {}
    if action["checksum_type"] == "FULL_OBJECT" and action.get("full_object_value"):
        extra["Checksum" + algorithm] = action["full_object_value"]
        extra["ChecksumType"] = "FULL_OBJECT"
    answer = s3.complete_multipart_upload(
        Bucket=action["bucket"], Key=action["key"], UploadId=created["UploadId"],
        MultipartUpload={"Parts": parts}, **extra,
    )
    out = described(answer)
    out["parts"] = len(parts)
    return out


def presign(s3, action):
    params = {"Bucket": action["bucket"], "Key": action["key"]}
    return {"url": s3.generate_presigned_url(action["method"], Params=params, ExpiresIn=300)}


def fetch(_, action):
    data = None
    if action["method"] == "PUT":
        with open(action["file"], "rb") as f:
            data = f.read()
    headers = dict(action.get("headers", {}))
    if data is not None:
        # urllib would send a form content type, which moto's server parses as a form.
        headers.setdefault("Content-Type", "application/octet-stream")
    request = urllib.request.Request(action["url"], data=data, method=action["method"],
                                     headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=60) as answer:
            body = answer.read()
            status = answer.status
    except urllib.error.HTTPError as err:
        body = err.read()
        status = err.code
    return {"status": status, "sha256": hashlib.sha256(body).hexdigest(), "size": len(body)}


def listing(s3, action):
    pages = s3.get_paginator("list_objects_v2").paginate(
        Bucket=action["bucket"], Prefix=action.get("prefix", "")
    )
    return {"keys": [o["Key"] for page in pages for o in page.get("Contents", [])]}


OPS = {"read": read, "write": write, "write_multipart": write_multipart,
       "presign": presign, "fetch": fetch, "list": listing}


def main():
    request = json.load(sys.stdin)
    s3 = client(request)
    results = []
    for action in request["actions"]:
        try:
            results.append({"ok": OPS[action["op"]](s3, action)})
        except Exception as err:  # reported to the Rust side, which fails with it
            results.append({"error": f"{type(err).__name__}: {err}"})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
