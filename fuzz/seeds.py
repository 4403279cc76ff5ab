#!/usr/bin/env python3
"""Reconstructs the seeds and dictionaries described in measurements/fuzz-runs.md and
ops-fuzz.md (the original corpora and dictionaries are not on this machine)."""
import os, re, glob, struct, json, subprocess

SRC = os.environ.get("S3W_REPO", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.environ.get("S3W_FUZZ_CORPUS", "fuzzrun/corpus")
DICTS = os.environ.get("S3W_FUZZ_DICTS", "fuzzrun/dicts")
os.makedirs(DICTS, exist_ok=True)

def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def dict_entry(b):
    if isinstance(b, str):
        b = b.encode()
    s = ""
    for c in b:
        if 0x20 <= c < 0x7f and c not in (0x22, 0x5c):
            s += chr(c)
        else:
            s += "\\x%02X" % c
    return '"' + s + '"'

def write_dict(name, entries):
    seen, lines = set(), []
    for e in entries:
        k = e.encode() if isinstance(e, str) else e
        if k in seen or not k:
            continue
        seen.add(k)
        lines.append(dict_entry(k))
    with open(os.path.join(DICTS, name), "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines)

# ---------------- XML (xml_listings/results/errors/requests, xml_tokens_diff) ----------------
fixtures = sorted(p for p in glob.glob(SRC + "/crates/s3-xml/testdata/**/*.xml", recursive=True)
                  if os.path.getsize(p) < 8192)
S3NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
hand = {
 "tagging.xml": f'<?xml version="1.0" encoding="UTF-8"?>\n<Tagging {S3NS}><TagSet><Tag><Key>env</Key><Value>prod &amp; test</Value></Tag><Tag><Key>owner</Key><Value>alice</Value></Tag></TagSet></Tagging>',
 "copy-object-result.xml": f'<?xml version="1.0" encoding="UTF-8"?>\n<CopyObjectResult {S3NS}><LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>"9b2cf535f27731c974343645a3985328"</ETag><ChecksumCRC32>i9aeUg==</ChecksumCRC32></CopyObjectResult>',
 "copy-part-result.xml": f'<CopyPartResult {S3NS}><LastModified>2011-04-11T20:34:56.000Z</LastModified><ETag>"9b2cf535f27731c974343645a3985328"</ETag><ChecksumSHA256>47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=</ChecksumSHA256></CopyPartResult>',
 "location-constraint.xml": f'<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint {S3NS}>EU</LocationConstraint>',
 "create-bucket-configuration.xml": f'<CreateBucketConfiguration {S3NS}><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>',
 "sts-assume-role.xml": '<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><SourceIdentity>Alice</SourceIdentity><AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/demo/TestAR</Arn><AssumedRoleId>ARO123EXAMPLE123:TestAR</AssumedRoleId></AssumedRoleUser><Credentials><AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId><SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey><SessionToken>AQoDYXdzEPT//////////wEXAMPLE</SessionToken><Expiration>2019-11-09T13:34:41Z</Expiration></Credentials><PackedPolicySize>6</PackedPolicySize></AssumeRoleResult><ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata></AssumeRoleResponse>',
 "complete-mpu-checksum.xml": f'<CompleteMultipartUpload {S3NS}><Part><PartNumber>1</PartNumber><ETag>"a54357aff0632cce46d942af68356b38"</ETag><ChecksumCRC32>i9aeUg==</ChecksumCRC32></Part><Part><PartNumber>2</PartNumber><ETag>"0c78aef83f66abc1fa1e8477f296d394"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part></CompleteMultipartUpload>',
 "delete-charref-cdata.xml": f'<?xml version="1.0" encoding="UTF-8"?>\n<Delete {S3NS}><Quiet>true</Quiet><Object><Key>a&#38;b&#x26;c</Key></Object><Object><Key><![CDATA[x<y>&z]]></Key><VersionId>v1</VersionId></Object></Delete>',
 "error-crlf-comment.xml": '<?xml version="1.0" encoding="UTF-8"?>\r\n<!-- served by a proxy -->\r\n<Error>\r\n  <Code>NoSuchKey</Code>\r\n  <Message>The specified key does not exist.</Message>\r\n  <Key>a/b.txt</Key>\r\n  <RequestId>4442587FB7D0A2F9</RequestId>\r\n  <HostId>abc=</HostId>\r\n</Error>\r\n',
 "list-objects-url.xml": f'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult {S3NS}><Name>bucket</Name><Prefix>a%20b/</Prefix><Marker></Marker><MaxKeys>1000</MaxKeys><Delimiter>%2F</Delimiter><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated><Contents><Key>a%20b/c%2Bd.txt</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size><StorageClass>STANDARD</StorageClass></Contents><CommonPrefixes><Prefix>a%20b/d%2F/</Prefix></CommonPrefixes></ListBucketResult>',
}
xml_targets = ["xml_listings", "xml_results", "xml_errors", "xml_requests", "xml_tokens_diff"]
for t in xml_targets:
    for i, p in enumerate(fixtures):
        rel = os.path.relpath(p, SRC + "/crates/s3-xml/testdata").replace("/", "__")
        put(t, "fixture-" + rel, open(p, "rb").read())
    for n, text in hand.items():
        put(t, "hand-" + n, text)

names = sorted(set(m.strip('"') for p in glob.glob(SRC + "/crates/s3-xml/src/*.rs")
                   for m in re.findall(r'"[A-Z][A-Za-z0-9]+"', open(p).read())))
xml_tokens = ['<?xml version="1.0" encoding="UTF-8"?>', "<?", "?>", "<!--", "-->", "<![CDATA[", "]]>",
    "<!DOCTYPE", "</", "/>", "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#38;", "&#x26;",
    "&#x10FFFF;", "&#0;", S3NS, "xmlns:s3=\"http://s3.amazonaws.com/doc/2006-03-01/\"", "s3:",
    "\r", "\r\n", "true", "false", "2009-10-12T17:50:30.000Z", "2019-11-09T13:34:41Z",
    "18446744073709551615", "18446744073709551616", '"9b2cf535f27731c974343645a3985328"',
    '"d41d8cd98f00b204e9800998ecf8427e-2"', "url", "CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256",
    "FULL_OBJECT", "COMPOSITE"]
n_xml = write_dict("xml.dict", xml_tokens + [f"<{n}>" for n in names] + [f"</{n}>" for n in names])

# ---------------- sigv4_canonicalize ----------------
FF = b"\xff"
put("sigv4_canonicalize", "s3-get",
    b"/my bucket/a+b%2Fc/../d//e.txt" + FF + b"list-type=2&prefix=a%20b&acl" + FF +
    b"Host:examplebucket.s3.amazonaws.com\nx-amz-meta-Owner:   alice   \nRange:bytes=0-9\n"
    b"x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n")
put("sigv4_canonicalize", "v4a-region-star",
    b"/a/./b/../c%20d/" + FF + b"*" + FF +
    b"host:example.com\nx-amz-date:20150830T123600Z\ncontent-type:text/plain\n")
put("sigv4_canonicalize", "v4a-region-list",
    b"/key" + FF + b"us-east-1,us-west-2,eu-*" + FF +
    b"X-Amz-Region-Set:us-east-1\nx-amz-security-token:token\nuser-agent:fuzz/1.0\n")

# ---------------- plan_* ----------------
put("plan_snapshot", "two-parts",
    "s3-multipart-snapshot 2\nupload-id VXBsb2FkIElEIGZvciBlbHZpbmc%20test\nobject-size 10485760\n"
    "part-size 5242880\npart 1 5242880 \"a54357aff0632cce46d942af68356b38\"%20crc32:i9aeUg==\n"
    "part 2 5242880 \"0c78aef83f66abc1fa1e8477f296d394\"\nend\n")
put("plan_snapshot", "empty-object",
    "s3-multipart-snapshot 2\nupload-id u1\nobject-size 0\npart-size 5242880\nend\n")
put("plan_snapshot", "max-size",
    "s3-multipart-snapshot 2\nupload-id x\nobject-size 18446744073709551615\npart-size 5368709120\n"
    "part 10000 5368709120 \"etag\"%20sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\nend\n")
# upload_events: part_size, concurrency, retries, mode(0 known/1 stream)[, size/2], then (number, flag, op[, extra])
def up(*b): return bytes(b)
put("plan_upload_events", "known-size",
    up(12, 1, 1, 0, 20,  0,0,0, 0,0,3, 1,0,0, 1,0,5,16, 1,0,7, 0,0,0, 2,0,5,16, 2,0,7, 3,0,5,8, 3,0,7, 0,0,0, 0,0,9))
put("plan_upload_events", "stream",
    up(8, 2, 2, 1,  0,0,0, 0,0,3, 1,0,5,8, 2,0,5,8, 1,0,7, 2,1,8, 0,0,0, 2,0,7, 3,0,5,0, 0,0,0, 0,0,9, 0,0,10))
# download_events: concurrency, range size, window, retries, length, then (index, op[, extra])
put("plan_download_events", "fetch-deliver-fail-cancel",
    up(2, 4, 1, 1, 40,  0,0, 0,0, 0,3, 1,3, 0,2, 1,2, 0,0, 2,4,0, 0,0, 2,3, 2,2, 0,5,0,8, 0,0, 3,3, 0,11))

# ---------------- ops_decode_response ----------------
def status(code): return struct.pack(">H", code - 100)
put("ops_decode_response", "200-crc32",
    status(200) + b"content-length:11\netag:\"5eb63bbbe01eeed093cb22bb8f5acdc3\"\nx-amz-checksum-crc32:DUoRhQ==\ncontent-type:text/plain" + FF + b"hello world")
put("ops_decode_response", "301-region",
    status(301) + b"x-amz-bucket-region:eu-west-1\ncontent-type:application/xml" + FF +
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed using the specified endpoint.</Message><Endpoint>bucket.s3.eu-west-1.amazonaws.com</Endpoint><Bucket>bucket</Bucket><RequestId>1</RequestId><HostId>h</HostId></Error>')
lov2 = [p for p in glob.glob(SRC + "/crates/s3-ops/testdata/**/*", recursive=True) if os.path.isfile(p)]
print("s3-ops testdata:", lov2)
for p in lov2:
    if p.endswith("recorded/list-objects-v2.xml"):
        put("ops_decode_response", "200-" + os.path.basename(p), status(200) + b"content-type:application/xml" + FF + open(p, "rb").read())

# ---------------- ops_encode_request ----------------
put("ops_encode_request", "seed",
    b"examplebucket" + FF + b"a b/../c+%?#" + FF + b"owner" + FF + b"alice" + FF + b"v1" + FF + struct.pack(">QQ", 5, 9))

# ---------------- sigv4_chunked_roundtrip ----------------
def chunk_seed(flags, cs, length, name, misuse, hp, value, custom, pattern):
    return bytes([flags]) + struct.pack(">H", cs) + struct.pack(">I", length)[1:] + bytes([name]) + \
        struct.pack(">H", misuse) + bytes([hp]) + value + FF + custom + FF + pattern
C = "sigv4_chunked_roundtrip"
put(C, "signed",            chunk_seed(0x00, 16, 20000, 0, 0, 0, b"", b"", b"abc"))
put(C, "signed-trailer",    chunk_seed(0x01, 16, 8193, 0, 0, 0, b"i9aeUg==", b"", b""))
put(C, "unsigned-trailer",  chunk_seed(0x02, 100, 1, 1, 0, 0, b"AAAAAA==", b"", b"x"))
put(C, "v4a-trailer",       chunk_seed(0x05, 16, 9000, 2, 0, 0, b"AAAAAAAAAAA=", b"", b"p"))
put(C, "v4a-no-trailer",    chunk_seed(0x04, 16, 8192, 0, 0, 0, b"", b"", b""))
put(C, "chunk-encoder-tok-enc", chunk_seed(0x9B, 16, 12000, 7, 0, 0x55, b"v", b"x-custom", b"ab"))
put(C, "large-chunks",      chunk_seed(0x40, 8000, 200000, 0, 0, 0, b"", b"", b"\x00\x01"))
put(C, "trailer-crlf",      chunk_seed(0x03, 16, 100, 9, 0xFFFF, 1, b"ab\r\ncd", b"x-amz-meta-t", b"z"))
n_chunk = write_dict("chunked.dict", [b"\xff", b"\r\n", "x-amz-checksum-crc32", "x-amz-trailer-signature", "AAAAAA==", b"\t", b"\x7f"])

# ---------------- ops_response_headers ----------------
H = ["content-range", "content-length", "last-modified", "expires", "etag", "date", "retry-after",
     "x-amz-checksum-crc32", "x-amz-checksum-crc32c", "x-amz-checksum-crc64nvme", "x-amz-checksum-sha1",
     "x-amz-checksum-sha256", "x-amz-checksum-type", "x-amz-delete-marker", "x-amz-missing-meta",
     "x-amz-mp-parts-count", "x-amz-tagging-count", "x-amz-meta-a", "x-amz-meta-b", "x-amz-storage-class",
     "x-amz-version-id", "x-amz-request-id", "x-amz-id-2", "x-amz-server-side-encryption",
     "x-amz-server-side-encryption-customer-algorithm", "x-amz-server-side-encryption-customer-key-md5",
     "x-amz-server-side-encryption-bucket-key-enabled", "content-type", "cache-control",
     "content-disposition", "content-encoding", "x-amz-bucket-region", "x-amz-object-size",
     "x-amz-object-lock-retain-until-date"]
STAT = [200, 206, 200, 206, 204, 304, 403, 404, 412, 416, 500, 503]
def resp(st, headers, body=None):
    out = bytes([STAT.index(st)])
    segs = [bytes([H.index(n)]) + v.encode() for n, v in headers]
    if body is not None:
        segs.append(b"\xfe" + body)
    return out + FF.join(segs)
R = "ops_response_headers"
put(R, "full-crc32", resp(200, [("content-length", "11"), ("etag", '"5eb63bbbe01eeed093cb22bb8f5acdc3"'),
    ("x-amz-checksum-crc32", "DUoRhQ=="), ("x-amz-checksum-type", "FULL_OBJECT"),
    ("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("content-type", "text/plain"), ("x-amz-meta-a", "1")], b"hello world"))
put(R, "206-sha256", resp(206, [("content-range", "bytes 0-4/11"), ("content-length", "5"),
    ("x-amz-checksum-sha256", "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="), ("etag", 'W/"abc"')], b"hello"))
put(R, "composite", resp(200, [("content-length", "3"), ("x-amz-checksum-crc32c", "yZRlqg==-3"),
    ("x-amz-checksum-type", "COMPOSITE"), ("x-amz-mp-parts-count", "3"), ("x-amz-tagging-count", "2"),
    ("x-amz-version-id", "v1"), ("x-amz-delete-marker", "false")], b"abc"))
put(R, "503-retry-after", resp(503, [("retry-after", "120"), ("content-type", "application/xml")],
    b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>r</RequestId></Error>"))
put(R, "500-year-9999", resp(500, [("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"), ("date", "Mon, 07 Dec 2026 04:00:00 GMT")],
    b"<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>"))
put(R, "sse-c", resp(200, [("x-amz-server-side-encryption-customer-algorithm", "AES256"),
    ("x-amz-server-side-encryption-customer-key-md5", "ZjQrne1X/iTcskbY2m3example=="),
    ("x-amz-server-side-encryption", "aws:kms"), ("x-amz-server-side-encryption-bucket-key-enabled", "true"),
    ("x-amz-object-size", "0"), ("content-length", "0"), ("x-amz-storage-class", "STANDARD_IA")], b""))
n_hdr = write_dict("headers.dict", ["bytes ", "/*", "-", "GMT", "Sun, 06 Nov 1994 08:49:37 GMT", ", ", " Nov ",
    "1994", "08:49:37", "W/\"", "\"", "==", "COMPOSITE", "FULL_OBJECT", "true", "false",
    "4294967295", "4294967296", "18446744073709551615", "18446744073709551616",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", b"\xff", b"\xfe", ":", ",", "/", " ",
    "AES256", "aws:kms", "STANDARD"])

# ---------------- credentials_profile ----------------
P = "credentials_profile"
def prof(cfg, cred, name=""):
    return cfg.encode() + FF + cred.encode() + FF + name.encode()
put(P, "basic-services-token", prof(
    "[default]\nregion = us-west-2\nservices = local\n\n[services local]\ns3 =\n  endpoint_url = http://127.0.0.1:9000\n  addressing_style = path\n\n[profile dev]\nregion=eu-west-1\n",
    "[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG\naws_session_token = tok\n\n[dev]\naws_access_key_id=A2\naws_secret_access_key=S2\n", "dev"))
put(P, "default-vs-profile-default", prof(
    "[default]\nregion = us-east-1\n[profile default]\nregion = eu-central-1\n",
    "[default]\naws_access_key_id = A\naws_secret_access_key = S\naws_security_token = legacy\n", ""))
put(P, "sso-role", prof(
    "[profile sso]\nsso_session = my-sso\nsso_account_id = 123456789012\nsso_role_name = ReadOnly\nregion = us-east-1\n\n[sso-session my-sso]\nsso_region = us-east-1\nsso_start_url = https://example.awsapps.com/start\n\n[profile role]\nrole_arn = arn:aws:iam::123456789012:role/r\nsource_profile = sso\ncredential_process = /bin/echo {}\n",
    "", "role"))
put(P, "multiline", prof(
    "[profile m]\nendpoint_url = https://s3.example.com # comment\ns3 =\n    max_concurrent_requests = 10\n\tendpoint_url = https://m.example.com\nregion = ap-south-1 ; other\n",
    "[m]\r\naws_access_key_id = AK\r\naws_secret_access_key = SK\r\n", "m"))
put(P, "unclosed-header", prof("[profile broken\nregion = x\n", "[ok]\naws_access_key_id=1\n", "ok"))
n_prof = write_dict("profile.dict", ["[profile ", "[default]", "[sso-session ", "[services ", "]", " = ", "=", "\n  ", "\n\t",
    "\r\n", " #", " ;", b"\xff", "aws_access_key_id", "aws_secret_access_key", "aws_session_token",
    "aws_security_token", "region", "endpoint_url", "services", "s3", "ignore_configured_endpoint_urls",
    "credential_process", "role_arn", "source_profile", "sso_session", "sso_start_url"])

# ---------------- credentials_documents ----------------
D = "credentials_documents"
put(D, "process", json.dumps({"Version": 1, "AccessKeyId": "AKIAIOSFODNN7EXAMPLE", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "SessionToken": "AQoDYXdzEPT//////////wEXAMPLE=", "Expiration": "2026-12-08T04:00:00Z"}))
put(D, "container", json.dumps({"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "secret/key+value=", "Token": "token/value+=", "Expiration": "2026-12-08T04:00:00Z", "RoleArn": "arn:aws:iam::1:role/r"}))
put(D, "imds", json.dumps({"Code": "Success", "LastUpdated": "2026-12-07T04:00:00Z", "Type": "AWS-HMAC", "AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "abc/def+ghi=", "Token": "tok/en+==", "Expiration": "2026-12-07T10:00:00Z"}))
put(D, "sso-role-credentials", json.dumps({"roleCredentials": {"accessKeyId": "ASIAEXAMPLE", "secretAccessKey": "sso/secret+key=", "sessionToken": "sso/token+value=", "expiration": 1765094400000}}))
put(D, "sso-token", json.dumps({"accessToken": "aoa/token+value=", "expiresAt": "2026-12-08T04:00:00Z", "refreshToken": "ref/resh+token=", "clientId": "cid", "clientSecret": "csec/ret+=", "registrationExpiresAt": "2027-01-01T00:00:00Z", "region": "us-east-1", "startUrl": "https://example.awsapps.com/start"}))
put(D, "sso-token-old-utc", json.dumps({"accessToken": "old/token+value=", "expiresAt": "2026-12-08T04:00:00UTC", "region": "us-east-1", "startUrl": "https://example.awsapps.com/start"}))
put(D, "oidc-answer", json.dumps({"accessToken": "new/access+token=", "expiresIn": 28800, "refreshToken": "new/refresh+tok=", "tokenType": "Bearer"}))

# ops_bucket_names: corpus exists (not re-run)
print("fixtures", len(fixtures), "xml names", len(names), "dicts: xml", n_xml, "chunked", n_chunk, "headers", n_hdr, "profile", n_prof)
