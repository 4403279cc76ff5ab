//! An independent SigV4 header-signature check for requests recorded by the fault server.
//!
//! Written from the AWS documentation (S3 rules: the path is canonicalized by decoding and
//! re-encoding every byte outside `A-Za-z0-9-_.~/`, never normalized or double-encoded), not
//! from `s3-sigv4`, so that a bug shared by the signer and its own tests still shows here.
//! Checked against the AWS S3 worked examples in `tests/testdata/sigv4`.

use hmac::{Hmac, KeyInit, Mac};
use http::HeaderMap;
use sha2::{Digest, Sha256};

/// What a valid signature covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// `x-amz-date`.
    pub amz_date: String,
    /// The hex signature.
    pub signature: String,
    /// `SignedHeaders`, as listed.
    pub signed_headers: Vec<String>,
    /// The region of the credential scope.
    pub region: String,
    /// `x-amz-content-sha256`.
    pub payload: String,
    /// The credential scope, `date/region/service/aws4_request`.
    pub scope: String,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn percent_decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let pair = text
                .get(index + 1..index + 3)
                .ok_or_else(|| format!("truncated escape in {text:?}"))?;
            let byte = u8::from_str_radix(pair, 16)
                .map_err(|_| format!("bad escape %{pair} in {text:?}"))?;
            out.push(byte);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    Ok(out)
}

fn encode(bytes: &[u8], keep_slash: bool) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &byte in bytes {
        let unreserved = byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~');
        if unreserved || (keep_slash && byte == b'/') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn canonical_query(query: &str) -> Result<String, String> {
    let mut pairs = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        pairs.push((
            encode(&percent_decode(name)?, false),
            encode(&percent_decode(value)?, false),
        ));
    }
    pairs.sort();
    Ok(pairs
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("&"))
}

fn canonical_header_value(headers: &HeaderMap, name: &str) -> Result<String, String> {
    let values: Vec<String> = headers
        .get_all(name)
        .iter()
        .map(|v| {
            let text = std::str::from_utf8(v.as_bytes())
                .map_err(|_| format!("header {name} is not UTF-8"))?;
            Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect::<Result<_, String>>()?;
    if values.is_empty() {
        return Err(format!("signed header {name} is missing from the request"));
    }
    Ok(values.join(","))
}

/// Checks the `Authorization` header of a request against `secret_key`. With `body`, also
/// checks that a hex `x-amz-content-sha256` is the body's SHA-256.
pub fn verify(
    method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
    body: Option<&[u8]>,
    secret_key: &str,
) -> Result<Signed, String> {
    verify_for("s3", method, path_and_query, headers, body, secret_key)
}

/// [`verify`] for a request to `service`. Without `x-amz-content-sha256` (other services
/// than S3 do not send it), the payload hash is the SHA-256 of `body`.
pub fn verify_for(
    service_expected: &str,
    method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
    body: Option<&[u8]>,
    secret_key: &str,
) -> Result<Signed, String> {
    let authorization = headers
        .get("authorization")
        .ok_or("no Authorization header")?
        .to_str()
        .map_err(|_| "Authorization is not ASCII")?;
    let fields = authorization
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or_else(|| format!("not a SigV4 Authorization: {authorization}"))?;
    let mut credential = None;
    let mut signed_headers = None;
    let mut signature = None;
    for field in fields.split(',') {
        let (name, value) = field
            .trim()
            .split_once('=')
            .ok_or_else(|| format!("malformed Authorization field {field:?}"))?;
        match name {
            "Credential" => credential = Some(value),
            "SignedHeaders" => signed_headers = Some(value),
            "Signature" => signature = Some(value),
            other => return Err(format!("unexpected Authorization field {other}")),
        }
    }
    let credential = credential.ok_or("no Credential")?;
    let signed_headers = signed_headers.ok_or("no SignedHeaders")?;
    let signature = signature.ok_or("no Signature")?;
    let scope_parts: Vec<&str> = credential.splitn(2, '/').collect();
    let scope = scope_parts.get(1).ok_or("Credential has no scope")?;
    let scope_fields: Vec<&str> = scope.split('/').collect();
    let [date, region, service, terminator] = scope_fields[..] else {
        return Err(format!("malformed credential scope {scope}"));
    };
    if service != service_expected || region.is_empty() {
        return Err(format!(
            "credential scope is not for {service_expected} in a region: {scope}"
        ));
    }
    if terminator != "aws4_request" {
        return Err(format!(
            "credential scope does not end in aws4_request: {scope}"
        ));
    }
    let amz_date = canonical_header_value(headers, "x-amz-date")?;
    if !amz_date.starts_with(date) {
        return Err(format!(
            "x-amz-date {amz_date} is not on the scope date {date}"
        ));
    }
    let payload = match (headers.contains_key("x-amz-content-sha256"), body) {
        (false, Some(body)) if service_expected != "s3" => hex(&Sha256::digest(body)),
        _ => canonical_header_value(headers, "x-amz-content-sha256")?,
    };
    if let Some(body) = body
        && payload.len() == 64
        && payload.bytes().all(|b| b.is_ascii_hexdigit())
    {
        let actual = hex(&Sha256::digest(body));
        if actual != payload {
            return Err(format!(
                "x-amz-content-sha256 {payload} is not the SHA-256 of the body received ({actual})"
            ));
        }
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    if sorted != names || names.iter().any(|n| n.to_ascii_lowercase() != *n) {
        return Err(format!(
            "SignedHeaders not sorted lowercase: {signed_headers}"
        ));
    }
    if !names.contains(&"host") {
        return Err("host is not signed".into());
    }
    let mut canonical_headers = String::new();
    for name in &names {
        canonical_headers.push_str(name);
        canonical_headers.push(':');
        canonical_headers.push_str(&canonical_header_value(headers, name)?);
        canonical_headers.push('\n');
    }
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let canonical_request = format!(
        "{method}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{payload}",
        encode(&percent_decode(path)?, true),
        canonical_query(query)?,
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let key = signing_key(secret_key, scope);
    let expected = hex(&hmac(&key, string_to_sign.as_bytes()));
    if expected != signature {
        return Err(format!(
            "signature mismatch: got {signature}, expected {expected}\ncanonical request:\n{canonical_request}"
        ));
    }
    Ok(Signed {
        amz_date,
        signature: signature.to_owned(),
        signed_headers: names.iter().map(|n| (*n).to_owned()).collect(),
        region: region.to_owned(),
        payload,
        scope: (*scope).to_owned(),
    })
}

/// The SigV4 signing key for `scope` (`date/region/service/aws4_request`).
pub fn signing_key(secret_key: &str, scope: &str) -> Vec<u8> {
    let mut parts = scope.split('/');
    let date = parts.next().unwrap_or_default();
    let mut key = hmac(format!("AWS4{secret_key}").as_bytes(), date.as_bytes());
    for part in parts.take(3) {
        key = hmac(&key, part.as_bytes());
    }
    key
}

/// Checks the query signature of a presigned request (`X-Amz-Algorithm`, `X-Amz-Credential`,
/// `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-SignedHeaders`, `X-Amz-Signature`; the payload
/// `UNSIGNED-PAYLOAD`) against `secret_key`, for `service_expected`.
pub fn verify_presigned(
    service_expected: &str,
    method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
    secret_key: &str,
) -> Result<Signed, String> {
    let (path, query) = path_and_query
        .split_once('?')
        .ok_or("a presigned request has a query")?;
    let param = |name: &str| -> Result<String, String> {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| percent_decode(v).map(|b| String::from_utf8_lossy(&b).into_owned()))
            .unwrap_or_else(|| Err(format!("no {name} in the query")))
    };
    if param("X-Amz-Algorithm")? != "AWS4-HMAC-SHA256" {
        return Err("not a SigV4 presigned request".into());
    }
    let credential = param("X-Amz-Credential")?;
    let scope = credential
        .split_once('/')
        .map(|(_, scope)| scope.to_owned())
        .ok_or("X-Amz-Credential has no scope")?;
    let fields: Vec<&str> = scope.split('/').collect();
    let [_, region, service, "aws4_request"] = fields[..] else {
        return Err(format!("malformed credential scope {scope}"));
    };
    if service != service_expected {
        return Err(format!(
            "credential scope is not for {service_expected}: {scope}"
        ));
    }
    let amz_date = param("X-Amz-Date")?;
    let signature = param("X-Amz-Signature")?;
    let signed_headers = param("X-Amz-SignedHeaders")?;
    let unsigned_query: String = query
        .split('&')
        .filter(|pair| !pair.starts_with("X-Amz-Signature="))
        .collect::<Vec<_>>()
        .join("&");
    let mut canonical_headers = String::new();
    for name in signed_headers.split(';') {
        canonical_headers.push_str(name);
        canonical_headers.push(':');
        canonical_headers.push_str(&canonical_header_value(headers, name)?);
        canonical_headers.push('\n');
    }
    let canonical_request = format!(
        "{method}\n{}\n{}\n{canonical_headers}\n{signed_headers}\nUNSIGNED-PAYLOAD",
        encode(&percent_decode(path)?, true),
        canonical_query(&unsigned_query)?,
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let expected = hex(&hmac(
        &signing_key(secret_key, &scope),
        string_to_sign.as_bytes(),
    ));
    if expected != signature {
        return Err(format!(
            "presigned signature mismatch\ncanonical request:\n{canonical_request}"
        ));
    }
    Ok(Signed {
        amz_date,
        signature,
        signed_headers: signed_headers.split(';').map(str::to_owned).collect(),
        region: region.to_owned(),
        payload: "UNSIGNED-PAYLOAD".to_owned(),
        scope,
    })
}

/// What a valid SigV4a signature covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedV4a {
    /// The service of the credential scope (`date/service/aws4_request`).
    pub service: String,
    /// `x-amz-region-set`.
    pub region_set: String,
    /// `SignedHeaders`, as listed.
    pub signed_headers: Vec<String>,
}

/// Checks a SigV4a `Authorization` header (`AWS4-ECDSA-P256-SHA256`): the ECDSA signature
/// over the string to sign of the canonical request rebuilt from what was received, with
/// the public key of the pair derived from `access_key` and `secret_key`.
pub fn verify_sigv4a(
    method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
    access_key: &str,
    secret_key: &str,
) -> Result<SignedV4a, String> {
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::{DerSignature, VerifyingKey};
    let authorization = canonical_header_value(headers, "authorization")?;
    let fields = authorization
        .strip_prefix("AWS4-ECDSA-P256-SHA256 Credential=")
        .ok_or_else(|| format!("not a SigV4a Authorization: {authorization}"))?;
    let (credential, rest) = fields
        .split_once(", SignedHeaders=")
        .ok_or("no SignedHeaders")?;
    let (signed_headers, signature) = rest.split_once(", Signature=").ok_or("no Signature")?;
    let scope = credential
        .strip_prefix(&format!("{access_key}/"))
        .ok_or_else(|| format!("credential {credential} is not of {access_key}"))?;
    let [date, service, "aws4_request"] = scope.split('/').collect::<Vec<_>>()[..] else {
        return Err(format!("malformed SigV4a scope {scope}"));
    };
    let amz_date = canonical_header_value(headers, "x-amz-date")?;
    if !amz_date.starts_with(date) {
        return Err(format!(
            "x-amz-date {amz_date} is not on the scope date {date}"
        ));
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    if !names.contains(&"host") || !names.contains(&"x-amz-region-set") {
        return Err(format!(
            "host or x-amz-region-set not signed: {signed_headers}"
        ));
    }
    let mut canonical_headers = String::new();
    for name in &names {
        canonical_headers.push_str(name);
        canonical_headers.push(':');
        canonical_headers.push_str(&canonical_header_value(headers, name)?);
        canonical_headers.push('\n');
    }
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let canonical_request = format!(
        "{method}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{}",
        encode(&percent_decode(path)?, true),
        canonical_query(query)?,
        canonical_header_value(headers, "x-amz-content-sha256")?,
    );
    let string_to_sign = format!(
        "AWS4-ECDSA-P256-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let credentials = s3_sigv4::Credentials::new(access_key, secret_key, None);
    let public_key = credentials
        .sigv4a_public_key()
        .map_err(|e| format!("no SigV4a key: {e}"))?;
    let key = VerifyingKey::from_sec1_bytes(&public_key).map_err(|e| e.to_string())?;
    let unhexed: Vec<u8> = (0..signature.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(signature.get(i..i + 2).unwrap_or("zz"), 16))
        .collect::<Result<_, _>>()
        .map_err(|_| format!("signature {signature} is not hex"))?;
    let signature = DerSignature::from_bytes(&unhexed).map_err(|e| e.to_string())?;
    key.verify(string_to_sign.as_bytes(), &signature)
        .map_err(|e| format!("{e}\ncanonical request:\n{canonical_request}"))?;
    Ok(SignedV4a {
        service: service.to_owned(),
        region_set: canonical_header_value(headers, "x-amz-region-set")?,
        signed_headers: names.iter().map(|n| (*n).to_owned()).collect(),
    })
}
