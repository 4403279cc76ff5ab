//! Flexible checksums (CRC32, CRC32C, CRC64NVME, SHA-1, SHA-256) and Content-MD5.
//!
//! CRC32 uses `crc32fast` (carry-less multiplication, runtime CPU detection), CRC32C uses
//! `crc32c` (the SSE 4.2 / ARMv8 CRC instructions), CRC64NVME is a slice-by-16 table CRC
//! in this module; the hashes use RustCrypto's `sha1` / `sha2` / `md-5` (SHA-NI where the
//! CPU has it). Values are encoded as S3 expects: the big-endian digest bytes, base64 with
//! padding.

use std::fmt;
use std::str::FromStr;

use http::HeaderMap;
use http::header::HeaderName;
use sha1::Digest as _;

use crate::encoding::{base64_decode, base64_encode};
use crate::error::Error;

/// A checksum algorithm S3 supports for object integrity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChecksumAlgorithm {
    /// CRC-32 (ISO-HDLC, as zlib).
    Crc32,
    /// CRC-32C (Castagnoli, iSCSI).
    Crc32c,
    /// CRC-64/NVME.
    Crc64Nvme,
    /// SHA-1.
    Sha1,
    /// SHA-256.
    Sha256,
}

impl ChecksumAlgorithm {
    /// Every algorithm, in the order [`ResponseChecksums::validator`] prefers them
    /// (cheapest first: all are equally good at catching corruption in transit).
    pub const ALL: [ChecksumAlgorithm; 5] = [
        ChecksumAlgorithm::Crc64Nvme,
        ChecksumAlgorithm::Crc32c,
        ChecksumAlgorithm::Crc32,
        ChecksumAlgorithm::Sha1,
        ChecksumAlgorithm::Sha256,
    ];

    /// The name S3 uses in `x-amz-checksum-algorithm` / `x-amz-sdk-checksum-algorithm`
    /// and in XML (`CRC32`, `CRC32C`, `CRC64NVME`, `SHA1`, `SHA256`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChecksumAlgorithm::Crc32 => "CRC32",
            ChecksumAlgorithm::Crc32c => "CRC32C",
            ChecksumAlgorithm::Crc64Nvme => "CRC64NVME",
            ChecksumAlgorithm::Sha1 => "SHA1",
            ChecksumAlgorithm::Sha256 => "SHA256",
        }
    }

    /// The header (or trailer) carrying the value: `x-amz-checksum-crc32`, ...
    pub fn header_name(self) -> HeaderName {
        // Constants: `from_static` at run time would check the name on every call.
        const NAMES: [HeaderName; 5] = [
            HeaderName::from_static(ChecksumAlgorithm::Crc32.header_str()),
            HeaderName::from_static(ChecksumAlgorithm::Crc32c.header_str()),
            HeaderName::from_static(ChecksumAlgorithm::Crc64Nvme.header_str()),
            HeaderName::from_static(ChecksumAlgorithm::Sha1.header_str()),
            HeaderName::from_static(ChecksumAlgorithm::Sha256.header_str()),
        ];
        match self {
            ChecksumAlgorithm::Crc32 => NAMES[0].clone(),
            ChecksumAlgorithm::Crc32c => NAMES[1].clone(),
            ChecksumAlgorithm::Crc64Nvme => NAMES[2].clone(),
            ChecksumAlgorithm::Sha1 => NAMES[3].clone(),
            ChecksumAlgorithm::Sha256 => NAMES[4].clone(),
        }
    }

    /// [`ChecksumAlgorithm::header_name`] as text.
    pub(crate) const fn header_str(self) -> &'static str {
        match self {
            ChecksumAlgorithm::Crc32 => "x-amz-checksum-crc32",
            ChecksumAlgorithm::Crc32c => "x-amz-checksum-crc32c",
            ChecksumAlgorithm::Crc64Nvme => "x-amz-checksum-crc64nvme",
            ChecksumAlgorithm::Sha1 => "x-amz-checksum-sha1",
            ChecksumAlgorithm::Sha256 => "x-amz-checksum-sha256",
        }
    }

    /// Digest length in bytes.
    pub fn digest_len(self) -> usize {
        match self {
            ChecksumAlgorithm::Crc32 | ChecksumAlgorithm::Crc32c => 4,
            ChecksumAlgorithm::Crc64Nvme => 8,
            ChecksumAlgorithm::Sha1 => 20,
            ChecksumAlgorithm::Sha256 => 32,
        }
    }

    /// This algorithm's value among the checksum fields of an XML document (a ListParts
    /// part, a CompleteMultipartUpload or copy result), as the store sent it.
    pub fn value_in(self, checksums: &s3_xml::Checksums) -> Option<&str> {
        match self {
            ChecksumAlgorithm::Crc32 => checksums.crc32.as_deref(),
            ChecksumAlgorithm::Crc32c => checksums.crc32c.as_deref(),
            ChecksumAlgorithm::Crc64Nvme => checksums.crc64nvme.as_deref(),
            ChecksumAlgorithm::Sha1 => checksums.sha1.as_deref(),
            ChecksumAlgorithm::Sha256 => checksums.sha256.as_deref(),
        }
    }

    /// Checksums `data` in one call.
    pub fn checksum(self, data: &[u8]) -> Checksum {
        let mut checksummer = Checksummer::new(self);
        checksummer.update(data);
        checksummer.finish()
    }
}

impl fmt::Display for ChecksumAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ChecksumAlgorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        ChecksumAlgorithm::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::malformed(format!("unknown checksum algorithm {s:?}")))
    }
}

/// Whether a multipart object's checksum covers the whole object or is a checksum of the
/// part checksums (`x-amz-checksum-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChecksumType {
    /// Checksum of the concatenated part checksums, suffixed `-<parts>`.
    Composite,
    /// Checksum of the full object (CRCs only).
    FullObject,
}

impl ChecksumType {
    /// `COMPOSITE` or `FULL_OBJECT`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChecksumType::Composite => "COMPOSITE",
            ChecksumType::FullObject => "FULL_OBJECT",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "COMPOSITE" => Some(ChecksumType::Composite),
            "FULL_OBJECT" => Some(ChecksumType::FullObject),
            _ => None,
        }
    }
}

/// A computed checksum.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Checksum {
    algorithm: ChecksumAlgorithm,
    digest: [u8; 32],
}

impl Checksum {
    fn from_digest(algorithm: ChecksumAlgorithm, bytes: &[u8]) -> Self {
        let mut digest = [0u8; 32];
        let len = algorithm.digest_len().min(bytes.len());
        digest[..len].copy_from_slice(&bytes[..len]);
        Checksum { algorithm, digest }
    }

    /// Parses a base64 value as sent by S3 (full-object values only; composite values with
    /// a `-<parts>` suffix are not digests of the data and return an error).
    pub fn from_base64(algorithm: ChecksumAlgorithm, value: &str) -> Result<Self, Error> {
        match base64_decode(value) {
            Some(bytes) if bytes.len() == algorithm.digest_len() => {
                Ok(Checksum::from_digest(algorithm, &bytes))
            }
            _ => Err(Error::malformed(format!(
                "{value:?} is not a base64 {algorithm} checksum"
            ))),
        }
    }

    /// The `algorithm` value among the checksum fields of an XML document, parsed: `None`
    /// when the store sent none, an error when it is not a base64 digest of that algorithm.
    pub fn from_xml(
        checksums: &s3_xml::Checksums,
        algorithm: ChecksumAlgorithm,
    ) -> Option<Result<Self, Error>> {
        algorithm
            .value_in(checksums)
            .map(|value| Checksum::from_base64(algorithm, value))
    }

    /// The algorithm.
    pub fn algorithm(&self) -> ChecksumAlgorithm {
        self.algorithm
    }

    /// The raw big-endian digest.
    pub fn as_bytes(&self) -> &[u8] {
        &self.digest[..self.algorithm.digest_len()]
    }

    /// Base64, as in `x-amz-checksum-*` headers.
    pub fn to_base64(&self) -> String {
        base64_encode(self.as_bytes())
    }

    /// For CRCs: the checksum of `self`'s data followed by `next`'s data of `next_len`
    /// bytes (how full-object multipart checksums are built from part checksums).
    /// `None` for the SHA algorithms or mismatched algorithms.
    pub fn combine(&self, next: &Checksum, next_len: u64) -> Option<Checksum> {
        let crc = CrcParams::of(self.algorithm)?;
        if next.algorithm != self.algorithm {
            return None;
        }
        let combined = crc.combine(self.crc_value(), next.crc_value(), next_len);
        Some(Checksum::from_crc(self.algorithm, combined))
    }

    /// The composite value S3 reports for a multipart object whose parts have these
    /// checksums (in part order): the checksum of the concatenated part digests, base64,
    /// suffixed `-<part count>`. `None` for an empty list or mixed algorithms.
    pub fn composite(parts: &[Checksum]) -> Option<String> {
        let algorithm = parts.first()?.algorithm;
        let mut checksummer = Checksummer::new(algorithm);
        for part in parts {
            if part.algorithm != algorithm {
                return None;
            }
            checksummer.update(part.as_bytes());
        }
        Some(format!(
            "{}-{}",
            checksummer.finish().to_base64(),
            parts.len()
        ))
    }

    fn crc_value(&self) -> u64 {
        self.as_bytes()
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b))
    }

    fn from_crc(algorithm: ChecksumAlgorithm, value: u64) -> Self {
        let bytes = value.to_be_bytes();
        let len = algorithm.digest_len();
        Checksum::from_digest(algorithm, &bytes[8 - len..])
    }
}

impl From<&Checksum> for s3_xml::Checksums {
    /// The checksum fields of an XML document carrying this one checksum (a part of
    /// CompleteMultipartUpload).
    fn from(checksum: &Checksum) -> Self {
        let mut checksums = s3_xml::Checksums::default();
        let value = Some(checksum.to_base64());
        match checksum.algorithm {
            ChecksumAlgorithm::Crc32 => checksums.crc32 = value,
            ChecksumAlgorithm::Crc32c => checksums.crc32c = value,
            ChecksumAlgorithm::Crc64Nvme => checksums.crc64nvme = value,
            ChecksumAlgorithm::Sha1 => checksums.sha1 = value,
            ChecksumAlgorithm::Sha256 => checksums.sha256 = value,
        }
        checksums
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.algorithm, self.to_base64())
    }
}

/// The parameters of S3's CRCs that combination needs. All three are reflected and use
/// all-ones for both the initial value and the final XOR.
struct CrcParams {
    /// The generator polynomial, bit-reversed (the x^0 coefficient is bit `width - 1`).
    poly_reflected: u64,
    width: u32,
}

impl CrcParams {
    fn of(algorithm: ChecksumAlgorithm) -> Option<CrcParams> {
        let (poly_reflected, width) = match algorithm {
            ChecksumAlgorithm::Crc32 => (0xEDB8_8320, 32),
            ChecksumAlgorithm::Crc32c => (0x82F6_3B78, 32),
            ChecksumAlgorithm::Crc64Nvme => (CRC64_NVME_POLY_REFLECTED, 64),
            ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256 => return None,
        };
        Some(CrcParams {
            poly_reflected,
            width,
        })
    }

    fn multiply(&self, a: u64, b: u64) -> u64 {
        gf2_multiply(a, b, self.poly_reflected, self.width)
    }

    /// The CRC of `A || B` from `crc(A)`, `crc(B)` and `len(B)`. With equal initial value
    /// and final XOR the register contributions of both cancel, so shifting `crc(A)` by
    /// `len(B)` zero bytes (a multiplication by `x^(8 len(B))`) and adding `crc(B)` is
    /// enough (the zlib `crc32_combine` method).
    fn combine(&self, crc_a: u64, crc_b: u64, len_b: u64) -> u64 {
        let shift = gf2_x_pow_8n(len_b, self.poly_reflected, self.width);
        self.multiply(shift, crc_a) ^ crc_b
    }
}

/// `a * b mod P` over GF(2), all in the reflected representation of a `width`-bit CRC
/// (the x^0 coefficient is bit `width - 1`).
const fn gf2_multiply(a: u64, mut b: u64, poly_reflected: u64, width: u32) -> u64 {
    let mut product = 0;
    let mut bit = 1u64 << (width - 1);
    while bit != 0 {
        if a & bit != 0 {
            product ^= b;
        }
        bit >>= 1;
        // b *= x
        b = if b & 1 == 1 {
            (b >> 1) ^ poly_reflected
        } else {
            b >> 1
        };
    }
    product
}

/// `x^(8 * bytes) mod P` (what shifting a CRC register over `bytes` zero bytes multiplies
/// it by), by square-and-multiply.
const fn gf2_x_pow_8n(mut bytes: u64, poly_reflected: u64, width: u32) -> u64 {
    let one = 1u64 << (width - 1);
    let mut power = one;
    let mut square = one >> 8; // x^8
    while bytes != 0 {
        if bytes & 1 == 1 {
            power = gf2_multiply(power, square, poly_reflected, width);
        }
        square = gf2_multiply(square, square, poly_reflected, width);
        bytes >>= 1;
    }
    power
}

/// CRC-64/NVME's polynomial 0xAD93D23594C93659, bit-reversed.
const CRC64_NVME_POLY_REFLECTED: u64 = 0x9A6C_9329_AC4B_C9B5;

/// Slice-by-16 tables for CRC-64/NVME: `CRC64_NVME_TABLES[k][b]` is the CRC register
/// contribution of byte `b` followed by `k` zero bytes (32 KiB, built at compile time).
static CRC64_NVME_TABLES: [[u64; 256]; 16] = crc64_nvme_tables();

const fn crc64_nvme_tables() -> [[u64; 256]; 16] {
    let mut tables = [[0u64; 256]; 16];
    let mut byte = 0;
    while byte < 256 {
        let mut crc = byte as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ CRC64_NVME_POLY_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][byte] = crc;
        byte += 1;
    }
    let mut k = 1;
    while k < 16 {
        let mut byte = 0;
        while byte < 256 {
            let previous = tables[k - 1][byte];
            tables[k][byte] = (previous >> 8) ^ tables[0][(previous & 0xFF) as usize];
            byte += 1;
        }
        k += 1;
    }
    tables
}

/// Bytes per lane of the interleaved CRC-64/NVME loop.
const CRC64_LANE: usize = 4096;
/// Independent lanes: one table-driven step is a chain of dependent loads, so four
/// interleaved chains keep the CPU's load ports busy (about 3x one chain).
const CRC64_LANES: usize = 4;

/// `CRC64_LANE_SHIFTS[i]` is `x^(8 * CRC64_LANE * (CRC64_LANES - 1 - i)) mod P`: moves
/// lane `i`'s register past the lanes after it.
const CRC64_LANE_SHIFTS: [u64; CRC64_LANES] = {
    let mut shifts = [0u64; CRC64_LANES];
    let mut lane = 0;
    while lane < CRC64_LANES {
        let bytes = (CRC64_LANE * (CRC64_LANES - 1 - lane)) as u64;
        shifts[lane] = gf2_x_pow_8n(bytes, CRC64_NVME_POLY_REFLECTED, 64);
        lane += 1;
    }
    shifts
};

/// Advances a CRC-64/NVME register (before the final XOR) over `data`: stripes of four
/// lanes computed side by side from zero registers (the first lane carries `crc`) and
/// joined by GF(2) shifts, then the tail 16 bytes a step.
fn crc64_nvme_update(mut crc: u64, data: &[u8]) -> u64 {
    let (stripes, tail) = data.as_chunks::<{ CRC64_LANE * CRC64_LANES }>();
    for stripe in stripes {
        let (lanes, _) = stripe.as_chunks::<CRC64_LANE>();
        let mut registers = [0; CRC64_LANES];
        registers[0] = crc;
        let blocks: [&[[u8; 16]]; CRC64_LANES] = std::array::from_fn(|i| lanes[i].as_chunks().0);
        for step in 0..CRC64_LANE / 16 {
            for (register, lane) in registers.iter_mut().zip(blocks) {
                *register = crc64_nvme_step16(*register, &lane[step]);
            }
        }
        crc = 0;
        for (register, shift) in registers.iter().zip(CRC64_LANE_SHIFTS) {
            crc ^= gf2_multiply(shift, *register, CRC64_NVME_POLY_REFLECTED, 64);
        }
    }
    let (blocks, rest) = tail.as_chunks::<16>();
    for block in blocks {
        crc = crc64_nvme_step16(crc, block);
    }
    let t = &CRC64_NVME_TABLES;
    for &byte in rest {
        crc = (crc >> 8) ^ t[0][usize::from(crc as u8 ^ byte)];
    }
    crc
}

/// One slice-by-16 step.
#[inline(always)]
fn crc64_nvme_step16(crc: u64, block: &[u8; 16]) -> u64 {
    let t = &CRC64_NVME_TABLES;
    let [
        b0,
        b1,
        b2,
        b3,
        b4,
        b5,
        b6,
        b7,
        h0,
        h1,
        h2,
        h3,
        h4,
        h5,
        h6,
        h7,
    ] = *block;
    let low = crc ^ u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]);
    let [l0, l1, l2, l3, l4, l5, l6, l7] = low.to_le_bytes();
    t[15][usize::from(l0)]
        ^ t[14][usize::from(l1)]
        ^ t[13][usize::from(l2)]
        ^ t[12][usize::from(l3)]
        ^ t[11][usize::from(l4)]
        ^ t[10][usize::from(l5)]
        ^ t[9][usize::from(l6)]
        ^ t[8][usize::from(l7)]
        ^ t[7][usize::from(h0)]
        ^ t[6][usize::from(h1)]
        ^ t[5][usize::from(h2)]
        ^ t[4][usize::from(h3)]
        ^ t[3][usize::from(h4)]
        ^ t[2][usize::from(h5)]
        ^ t[1][usize::from(h6)]
        ^ t[0][usize::from(h7)]
}

enum State {
    Crc32(crc32fast::Hasher),
    /// The CRC-32C value so far (the `crc32c` crate applies the XORs on each call).
    Crc32c(u32),
    /// The CRC-64/NVME register before the final XOR.
    Crc64Nvme(u64),
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

/// Incremental checksum over data fed in pieces.
///
/// ```
/// use s3_ops::{ChecksumAlgorithm, Checksummer};
///
/// let mut crc = Checksummer::new(ChecksumAlgorithm::Crc32);
/// crc.update(b"1234");
/// crc.update(b"56789");
/// assert_eq!(crc.finish().to_base64(), "y/Q5Jg=="); // 0xCBF43926
/// ```
pub struct Checksummer {
    algorithm: ChecksumAlgorithm,
    state: State,
}

impl Checksummer {
    /// Starts a checksum.
    pub fn new(algorithm: ChecksumAlgorithm) -> Self {
        let state = match algorithm {
            ChecksumAlgorithm::Crc32 => State::Crc32(crc32fast::Hasher::new()),
            ChecksumAlgorithm::Crc32c => State::Crc32c(0),
            ChecksumAlgorithm::Crc64Nvme => State::Crc64Nvme(u64::MAX),
            ChecksumAlgorithm::Sha1 => State::Sha1(sha1::Sha1::new()),
            ChecksumAlgorithm::Sha256 => State::Sha256(sha2::Sha256::new()),
        };
        Checksummer { algorithm, state }
    }

    /// The algorithm.
    pub fn algorithm(&self) -> ChecksumAlgorithm {
        self.algorithm
    }

    /// Feeds more data.
    pub fn update(&mut self, data: &[u8]) {
        match &mut self.state {
            State::Crc32(hasher) => hasher.update(data),
            State::Crc32c(crc) => *crc = crc32c::crc32c_append(*crc, data),
            State::Crc64Nvme(crc) => *crc = crc64_nvme_update(*crc, data),
            State::Sha1(hasher) => hasher.update(data),
            State::Sha256(hasher) => hasher.update(data),
        }
    }

    /// The checksum of everything fed so far.
    pub fn finish(self) -> Checksum {
        match self.state {
            State::Crc32(hasher) => Checksum::from_crc(self.algorithm, hasher.finalize().into()),
            State::Crc32c(crc) => Checksum::from_crc(self.algorithm, crc.into()),
            State::Crc64Nvme(crc) => Checksum::from_crc(self.algorithm, !crc),
            State::Sha1(hasher) => Checksum::from_digest(self.algorithm, &hasher.finalize()),
            State::Sha256(hasher) => Checksum::from_digest(self.algorithm, &hasher.finalize()),
        }
    }
}

impl fmt::Debug for Checksummer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checksummer")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

/// Incremental MD5 for the `Content-MD5` header (some operations and stores require it).
#[derive(Default)]
pub struct ContentMd5(md5::Md5);

impl ContentMd5 {
    /// Starts a digest.
    pub fn new() -> Self {
        ContentMd5::default()
    }

    /// Feeds more data.
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    /// The base64 header value.
    pub fn finish(self) -> String {
        base64_encode(&self.0.finalize())
    }

    /// The `Content-MD5` value of `data`.
    pub fn of(data: &[u8]) -> String {
        let mut md5 = ContentMd5::new();
        md5.update(data);
        md5.finish()
    }
}

/// The ETag S3 gives an object assembled from parts with these ETags (in part order), when
/// each part ETag is the hex MD5 of the part (plain or SSE-S3 uploads): the hex MD5 of the
/// concatenated binary part MD5s, suffixed `-<part count>`, quoted. `None` when a part ETag
/// is not a hex MD5 (SSE-KMS, SSE-C, some S3-compatible stores): the object's ETag then
/// cannot be predicted.
///
/// ```
/// use s3_ops::checksum::multipart_etag;
/// use s3_ops::ETag;
///
/// let parts = ["\"c4ca4238a0b923820dcc509a6f75849b\"", "\"c81e728d9d4c2f636f067f89cc14862c\""]
///     .map(|etag| ETag::parse(etag).unwrap());
/// assert_eq!(
///     multipart_etag(&parts).unwrap().as_str(),
///     "\"62be021ce84139205cdaf464abcd82ff-2\""
/// );
/// ```
pub fn multipart_etag(parts: &[s3_xml::ETag]) -> Option<s3_xml::ETag> {
    let mut md5 = md5::Md5::new();
    for part in parts {
        let hex = part.unquoted();
        if hex.len() != 32 || part.is_weak() {
            return None;
        }
        let mut digest = [0u8; 16];
        for (byte, pair) in digest.iter_mut().zip(hex.as_bytes().chunks(2)) {
            let text = std::str::from_utf8(pair).ok()?;
            *byte = u8::from_str_radix(text, 16).ok()?;
        }
        md5.update(digest);
    }
    if parts.is_empty() {
        return None;
    }
    let hex: String = md5
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    s3_xml::ETag::parse(&format!("\"{hex}-{}\"", parts.len())).ok()
}

impl fmt::Debug for ContentMd5 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContentMd5")
    }
}

/// The checksums a response announced (`x-amz-checksum-*`, `x-amz-checksum-type`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseChecksums {
    /// `(algorithm, base64 value)` pairs in header order.
    pub values: Vec<(ChecksumAlgorithm, String)>,
    /// `x-amz-checksum-type`, if sent.
    pub checksum_type: Option<ChecksumType>,
}

impl ResponseChecksums {
    /// Reads the checksum headers of a response.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        Self::from_head(&crate::response::Head::new(headers))
    }

    pub(crate) fn from_head(head: &crate::response::Head<'_>) -> Self {
        let values = ChecksumAlgorithm::ALL
            .into_iter()
            .filter_map(|algorithm| {
                let value = head.string(algorithm.header_str())?;
                Some((algorithm, value))
            })
            .collect();
        let checksum_type = head
            .string("x-amz-checksum-type")
            .as_deref()
            .and_then(ChecksumType::parse);
        ResponseChecksums {
            values,
            checksum_type,
        }
    }

    /// True if the values are composite (checksums of part checksums, `<base64>-<parts>`):
    /// they cannot check the object's bytes in one pass.
    pub fn is_composite(&self) -> bool {
        self.checksum_type == Some(ChecksumType::Composite)
            || self.values.iter().any(|(_, value)| value.contains('-'))
    }

    /// The announced value for `algorithm`.
    pub fn get(&self, algorithm: ChecksumAlgorithm) -> Option<&str> {
        self.values
            .iter()
            .find(|(a, _)| *a == algorithm)
            .map(|(_, v)| v.as_str())
    }

    /// A validator for the body, if a value that covers the whole body was announced
    /// (composite `...-N` multipart values, and part-range responses, cannot be checked).
    pub fn validator(&self) -> Option<ChecksumValidator> {
        ChecksumAlgorithm::ALL.into_iter().find_map(|algorithm| {
            let expected = Checksum::from_base64(algorithm, self.get(algorithm)?).ok()?;
            Some(ChecksumValidator {
                checksummer: Checksummer::new(algorithm),
                expected,
            })
        })
    }
}

/// Checks a streamed body against the checksum the server announced.
#[derive(Debug)]
pub struct ChecksumValidator {
    checksummer: Checksummer,
    expected: Checksum,
}

impl ChecksumValidator {
    /// Validates against a known value.
    pub fn new(expected: Checksum) -> Self {
        ChecksumValidator {
            checksummer: Checksummer::new(expected.algorithm()),
            expected,
        }
    }

    /// The checksum the body must have.
    pub fn expected(&self) -> &Checksum {
        &self.expected
    }

    /// Feeds the next piece of the body.
    pub fn update(&mut self, data: &[u8]) {
        self.checksummer.update(data);
    }

    /// Compares once the whole body was fed.
    pub fn finish(self) -> Result<(), Error> {
        let computed = self.checksummer.finish();
        if computed == self.expected {
            Ok(())
        } else {
            Err(Error::ChecksumMismatch {
                algorithm: computed.algorithm(),
                expected: self.expected.to_base64(),
                computed: computed.to_base64(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference CRC by the textbook bitwise definition (reflected in and out).
    fn reference_crc(poly_reflected: u64, width: u32, data: &[u8]) -> u64 {
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let mut crc = mask;
        for &byte in data {
            crc ^= u64::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ poly_reflected
                } else {
                    crc >> 1
                };
            }
        }
        crc ^ mask
    }

    #[test]
    fn check_values_of_the_catalogue() {
        // "123456789" check values from the CRC catalogue.
        let check = |alg: ChecksumAlgorithm| alg.checksum(b"123456789").as_bytes().to_vec();
        assert_eq!(
            check(ChecksumAlgorithm::Crc32),
            0xCBF4_3926u32.to_be_bytes()
        );
        assert_eq!(
            check(ChecksumAlgorithm::Crc32c),
            0xE306_9283u32.to_be_bytes()
        );
        assert_eq!(
            check(ChecksumAlgorithm::Crc64Nvme),
            0xAE8B_1486_0A79_9888u64.to_be_bytes()
        );
    }

    #[test]
    fn crcs_match_bitwise_reference_over_pieces() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let cases = [
            (ChecksumAlgorithm::Crc32, 0xEDB8_8320u64, 32),
            (ChecksumAlgorithm::Crc32c, 0x82F6_3B78, 32),
            (ChecksumAlgorithm::Crc64Nvme, 0x9A6C_9329_AC4B_C9B5, 64),
        ];
        for (algorithm, poly, width) in cases {
            let mut checksummer = Checksummer::new(algorithm);
            for piece in data.chunks(777) {
                checksummer.update(piece);
            }
            let expected = reference_crc(poly, width, &data);
            let len = algorithm.digest_len();
            assert_eq!(
                checksummer.finish().as_bytes(),
                &expected.to_be_bytes()[8 - len..],
                "{algorithm}"
            );
        }
    }

    #[test]
    fn crc64_lanes_match_bitwise_reference() {
        // Long enough for two interleaved 16 KiB stripes plus a tail, whole and in pieces
        // that straddle stripe boundaries.
        let data: Vec<u8> = (0..40_003u32).map(|i| (i * 131 % 251) as u8).collect();
        let expected = reference_crc(0x9A6C_9329_AC4B_C9B5, 64, &data).to_be_bytes();
        let whole = ChecksumAlgorithm::Crc64Nvme.checksum(&data);
        assert_eq!(whole.as_bytes(), expected);
        let mut pieces = Checksummer::new(ChecksumAlgorithm::Crc64Nvme);
        for piece in data.chunks(20_000) {
            pieces.update(piece);
        }
        assert_eq!(pieces.finish(), whole);
    }

    #[test]
    fn hashes_match_published_vectors() {
        // FIPS 180 "abc" vectors, base64 of the digests.
        assert_eq!(
            ChecksumAlgorithm::Sha1.checksum(b"abc").to_base64(),
            "qZk+NkcGgWq6PiVxeFDCbJzQ2J0="
        );
        assert_eq!(
            ChecksumAlgorithm::Sha256.checksum(b"abc").to_base64(),
            "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
        // RFC 1321: MD5("abc") = 900150983cd24fb0d6963f7d28e17f72.
        assert_eq!(ContentMd5::of(b"abc"), "kAFQmDzST7DWlj99KOF/cg==");
        // The empty body, as S3 documents it for Content-MD5.
        assert_eq!(ContentMd5::of(b""), "1B2M2Y8AsgTpgAmY7PhCfg==");
    }

    #[test]
    fn base64_round_trip_and_validation() {
        let checksum = ChecksumAlgorithm::Crc32c.checksum(b"hello");
        let parsed =
            Checksum::from_base64(ChecksumAlgorithm::Crc32c, &checksum.to_base64()).unwrap();
        assert_eq!(parsed, checksum);
        assert!(Checksum::from_base64(ChecksumAlgorithm::Crc32, "abc").is_err());
        assert!(Checksum::from_base64(ChecksumAlgorithm::Crc32, "zFtLXw==-3").is_err());

        let mut headers = HeaderMap::new();
        headers.insert(
            "x-amz-checksum-crc32c",
            checksum.to_base64().parse().unwrap(),
        );
        headers.insert("x-amz-checksum-type", "FULL_OBJECT".parse().unwrap());
        let announced = ResponseChecksums::from_headers(&headers);
        assert_eq!(announced.checksum_type, Some(ChecksumType::FullObject));
        let mut good = announced.validator().unwrap();
        good.update(b"hel");
        good.update(b"lo");
        assert_eq!(good.finish(), Ok(()));
        let mut bad = announced.validator().unwrap();
        bad.update(b"hellO");
        assert!(matches!(bad.finish(), Err(Error::ChecksumMismatch { .. })));
    }

    #[test]
    fn composite_multipart_checksums() {
        // Expected values computed independently (Python hashlib / zlib).
        let sha = |data: &[u8]| ChecksumAlgorithm::Sha256.checksum(data);
        assert_eq!(
            Checksum::composite(&[sha(b"part one"), sha(b"part two")]).unwrap(),
            "ZcfzJvHWAX9vO7fPKA9XUU5dtZ+mmrAFxgKDQljlC2k=-2"
        );
        let crc = |data: &[u8]| ChecksumAlgorithm::Crc32.checksum(data);
        assert_eq!(
            Checksum::composite(&[crc(b"part one"), crc(b"part two")]).unwrap(),
            "FZJWqg==-2"
        );
        // The full-object form of the same parts, by combination.
        assert_eq!(
            crc(b"part one")
                .combine(&crc(b"part two"), 8)
                .unwrap()
                .to_base64(),
            "PgOO3Q=="
        );
        assert_eq!(Checksum::composite(&[]), None);
        assert_eq!(Checksum::composite(&[crc(b"a"), sha(b"a")]), None);
    }

    #[test]
    fn xml_checksum_fields_round_trip_for_every_algorithm() {
        for algorithm in ChecksumAlgorithm::ALL {
            let checksum = algorithm.checksum(b"part data");
            let fields = s3_xml::Checksums::from(&checksum);
            assert_eq!(
                algorithm.value_in(&fields),
                Some(checksum.to_base64().as_str())
            );
            assert_eq!(
                Checksum::from_xml(&fields, algorithm),
                Some(Ok(checksum.clone()))
            );
            for other in ChecksumAlgorithm::ALL
                .into_iter()
                .filter(|a| *a != algorithm)
            {
                assert_eq!(
                    other.value_in(&fields),
                    None,
                    "{algorithm} set only its own field"
                );
            }
        }
        let mut garbled = s3_xml::Checksums::default();
        garbled.crc32 = Some("not base64!".to_owned());
        assert!(matches!(
            Checksum::from_xml(&garbled, ChecksumAlgorithm::Crc32),
            Some(Err(_))
        ));
    }

    #[test]
    fn multipart_etags_need_md5_part_etags() {
        let etag = |text: &str| s3_xml::ETag::parse(text).unwrap();
        // One part "a": md5("a") = 0cc175b9c0f1b6a831c399e269772661; the object ETag is
        // md5 of that digest's 16 bytes (computed independently with Python's hashlib).
        assert_eq!(
            multipart_etag(&[etag("\"0cc175b9c0f1b6a831c399e269772661\"")])
                .unwrap()
                .as_str(),
            "\"b6ff9a06b7e20bcb2858c5b8ff744aea-1\""
        );
        assert_eq!(multipart_etag(&[]), None);
        assert_eq!(multipart_etag(&[etag("\"kms-style-etag\"")]), None);
        assert_eq!(
            multipart_etag(&[etag("\"0cc175b9c0f1b6a831c399e26977266z\"")]),
            None
        );
    }

    #[test]
    fn combine_equals_checksum_of_concatenation() {
        for algorithm in [
            ChecksumAlgorithm::Crc32,
            ChecksumAlgorithm::Crc32c,
            ChecksumAlgorithm::Crc64Nvme,
        ] {
            let first = algorithm.checksum(b"hello, ");
            let second = algorithm.checksum(b"world");
            assert_eq!(
                first.combine(&second, 5).unwrap(),
                algorithm.checksum(b"hello, world")
            );
        }
        let sha = ChecksumAlgorithm::Sha256.checksum(b"x");
        assert!(sha.combine(&sha, 1).is_none());
    }

    #[test]
    fn combine_at_every_split_of_a_long_buffer() {
        // The GF(2) shift must hold for empty tails, unaligned lengths and tails longer
        // than 2^k for several k (exercises each square-and-multiply step).
        let data: Vec<u8> = (0..5_000u32).map(|i| (i * 7 % 253) as u8).collect();
        for algorithm in [
            ChecksumAlgorithm::Crc32,
            ChecksumAlgorithm::Crc32c,
            ChecksumAlgorithm::Crc64Nvme,
        ] {
            let whole = algorithm.checksum(&data);
            for split in [0, 1, 7, 16, 255, 256, 1000, 4095, 4999, 5000] {
                let (head, tail) = data.split_at(split);
                let combined = algorithm
                    .checksum(head)
                    .combine(&algorithm.checksum(tail), tail.len() as u64)
                    .unwrap();
                assert_eq!(combined, whole, "{algorithm} split at {split}");
            }
        }
        let crc32 = ChecksumAlgorithm::Crc32.checksum(b"a");
        let crc32c = ChecksumAlgorithm::Crc32c.checksum(b"a");
        assert!(crc32.combine(&crc32c, 1).is_none());
    }
}
