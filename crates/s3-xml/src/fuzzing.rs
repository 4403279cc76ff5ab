//! Entry points for the fuzz targets, benches and the arbitrary-input tests.
//! Not a stable API (behind the `fuzzing` feature).

use crate::*;

/// A group of decoders that one fuzz target drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// ListObjectsV2, ListObjects, ListObjectVersions, ListMultipartUploads,
    /// ListParts, ListBuckets.
    Listings,
    /// Initiate/Complete multipart, copy results, DeleteResult, bucket
    /// location, tagging, STS; the bucket and object configurations (Object Lock,
    /// versioning, lifecycle, CORS, encryption, public access block, ACLs) and
    /// GetObjectAttributes.
    Results,
    /// The error document and `decode_or_error` for the three documents that
    /// may hide an error in a 200.
    Errors,
    /// The request bodies (CompleteMultipartUpload, Delete, CreateBucketConfiguration,
    /// RestoreRequest).
    Requests,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 4] = [
        Family::Listings,
        Family::Results,
        Family::Errors,
        Family::Requests,
    ];
}

type Decoder = fn(&[u8], &Limits) -> Result<(), Error>;

macro_rules! decoders {
    ($($f:expr),* $(,)?) => { &[$(|xml, limits| $f(xml, limits).map(drop)),*] };
}

fn decoders(family: Family) -> &'static [Decoder] {
    match family {
        Family::Listings => decoders![
            decode_list_objects_v2,
            decode_list_objects,
            decode_list_object_versions,
            decode_list_multipart_uploads,
            decode_list_parts,
            decode_list_buckets,
        ],
        Family::Results => decoders![
            decode_initiate_multipart_upload,
            decode_complete_multipart_upload,
            decode_copy_object,
            decode_copy_part,
            decode_delete_result,
            decode_bucket_location,
            decode_tagging,
            decode_assume_role,
            decode_retention,
            decode_legal_hold,
            decode_object_lock_configuration,
            decode_versioning_configuration,
            decode_lifecycle_configuration,
            decode_cors_configuration,
            decode_server_side_encryption_configuration,
            decode_public_access_block_configuration,
            decode_get_object_attributes,
            decode_access_control_policy,
        ],
        Family::Errors => decoders![
            decode_error_document,
            decode_or_error::<CompleteMultipartUploadResult>,
            decode_or_error::<CopyObjectResult>,
            decode_or_error::<CopyPartResult>,
        ],
        Family::Requests => decoders![
            decode_complete_multipart_upload_request,
            decode_delete_request,
            decode_create_bucket_configuration,
            decode_restore_request,
        ],
    }
}

/// Runs every decoder of `family` on `xml` and returns how many accepted it.
///
/// # Panics
///
/// If a decoder accepts a document longer than `limits.max_bytes()`, or
/// refuses it with anything but [`ErrorKind::TooLarge`] (the property the
/// fuzz targets check). Decoders themselves never panic.
pub fn decode_family(family: Family, xml: &[u8], limits: &Limits) -> usize {
    let mut accepted = 0;
    for decode in decoders(family) {
        let result = decode(xml, limits);
        if xml.len() > limits.max_bytes() {
            let kind = result.as_ref().err().map(Error::kind);
            assert!(
                matches!(kind, Some(ErrorKind::TooLarge { .. })),
                "byte limit not enforced: {result:?}"
            );
        }
        accepted += usize::from(result.is_ok());
    }
    accepted
}

/// The one-entry ListObjectsV2 page of the published s3-wire workloads.
pub fn workload_list_objects_v2_one_entry() -> Vec<u8> {
    br#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>example-bucket</Name><Prefix>photos/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated><Contents><Key>photos/2006/January/sample.jpg</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified><ETag>&quot;bf1d737a4d46a19f3bced6905cc8b902&quot;</ETag><ChecksumAlgorithm>CRC64NVME</ChecksumAlgorithm><ChecksumType>FULL_OBJECT</ChecksumType><Size>142863</Size><StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>"#
        .to_vec()
}

/// The S3 error document of the published s3-wire workloads.
pub fn workload_error_document() -> Vec<u8> {
    br#"<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>photos/2006/January/sample.jpg</Key><RequestId>4442587FB7D0A2F9</RequestId><HostId>KQ6PqgR4Sq8cSyWtxqNtmhUf+rcBzLSoU6F6IuV8Zy8vdQeHOjE1H0OMiK6jz3mHhY8fPXxXYdk=</HostId></Error>"#
        .to_vec()
}

/// The one-upload ListMultipartUploads page of the published s3-wire workloads.
pub fn workload_list_multipart_uploads_one_upload() -> Vec<u8> {
    br#"<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>example-bucket</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker>my-movie.m2ts</NextKeyMarker><NextUploadIdMarker>VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</NextUploadIdMarker><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated><Upload><Key>my-movie.m2ts</Key><UploadId>VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId><Initiator><ID>arn:aws:iam::111122223333:user/user1-11111a31-17b5-4fb7-9df5-b111111f13de</ID><DisplayName>InitiatorDisplayName</DisplayName></Initiator><Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID><DisplayName>OwnerDisplayName</DisplayName></Owner><StorageClass>STANDARD</StorageClass><Initiated>2010-11-10T20:48:33.000Z</Initiated><ChecksumAlgorithm>CRC32</ChecksumAlgorithm><ChecksumType>COMPOSITE</ChecksumType></Upload></ListMultipartUploadsResult>"#
        .to_vec()
}

/// A realistic full ListObjectsV2 page: `keys` entries with long, partly
/// escaped keys (~150–250 bytes), quoted ETags, checksums and a continuation
/// token, as S3 sends it (one line, no owner).
pub fn workload_list_objects_v2_page(keys: usize) -> Vec<u8> {
    use std::fmt::Write;
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
         <Name>analytics-data-lake-prod-eu-west-1</Name><Prefix>warehouse/events/</Prefix>\
         <NextContinuationToken>1SL9nYFaimMAwnR9dJnF4M5NMfm3Em6/ClPUVLEH3GOSw5yjeI+wCBLj3THB8DuJSUFhKNy5cGK5QBb/SvE+MKMZurarr0ZhOhQae2SQ8B4QQPkqQHKp9MeJXsYe4UH8</NextContinuationToken>",
    );
    let _ = write!(
        xml,
        "<KeyCount>{keys}</KeyCount><MaxKeys>{keys}</MaxKeys><IsTruncated>true</IsTruncated>"
    );
    // A small deterministic generator (splitmix64) so the page is the same on every run.
    let mut state = 0x5eed_u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in 0..keys {
        let (a, b, c) = (next(), next(), next());
        let _ = write!(
            xml,
            "<Contents><Key>warehouse/events/tenant={tenant:04}/event_date=2024-{month:02}-{day:02}/hour={hour:02}/\
             part-{i:05}-{a:016x}-{b:016x}-c000{extra}.zstd.parquet</Key>\
             <LastModified>2024-{month:02}-{day:02}T{hour:02}:{min:02}:{sec:02}.{ms:03}Z</LastModified>\
             <ETag>&quot;{c:016x}{a:016x}&quot;</ETag><ChecksumAlgorithm>CRC64NVME</ChecksumAlgorithm>\
             <ChecksumType>FULL_OBJECT</ChecksumType><Size>{size}</Size><StorageClass>{class}</StorageClass></Contents>",
            tenant = a % 5000,
            month = 1 + b % 12,
            day = 1 + c % 28,
            hour = a % 24,
            min = b % 60,
            sec = c % 60,
            ms = a % 1000,
            extra = if i % 7 == 0 {
                "_R&amp;D &lt;backfill&gt;"
            } else {
                ""
            },
            size = c % 500_000_000,
            class = if i % 5 == 0 {
                "INTELLIGENT_TIERING"
            } else {
                "STANDARD"
            },
        );
    }
    xml.push_str("</ListBucketResult>");
    xml.into_bytes()
}

/// The tokens of `input` as the decoders' tokenizer sees them, rendered for
/// comparison with another XML reader: `<name` / `<name/` (local names), `>`
/// for an end tag, `T:text` (adjacent text merged), `&name;` for a
/// reference, `C:cdata`. Comments, processing instructions and the XML
/// declaration are left out. `None` if the tokenizer refuses the input or
/// meets a DOCTYPE.
pub fn tokens(input: &str) -> Option<Vec<String>> {
    use crate::lexer::{Lexer, Token};
    let mut lexer = Lexer::new(input);
    let mut out: Vec<String> = Vec::new();
    loop {
        match lexer.next_token().ok()? {
            Token::Eof => return Some(out),
            Token::Doctype => return None,
            Token::Start { local, empty } => {
                out.push(format!("<{local}{}", if empty { "/" } else { "" }))
            }
            Token::End => out.push(">".into()),
            Token::Text(text) | Token::TextWithCr(text) => match out.last_mut() {
                Some(last) if last.starts_with("T:") => last.push_str(text),
                _ => out.push(format!("T:{text}")),
            },
            Token::Reference(name) => out.push(format!("&{name};")),
            Token::CData(text) => out.push(format!("C:{text}")),
            Token::Declaration { .. } | Token::Ignorable => {}
        }
    }
}

/// quick-xml's view of `input` (well-formedness checks on), rendered like
/// [`tokens`]; `Err` with quick-xml's message if it refuses the input.
#[cfg(feature = "differential")]
pub fn quick_xml_tokens(input: &str) -> Result<Vec<String>, String> {
    let mut reader = quick_xml::Reader::from_str(input);
    let config = reader.config_mut();
    config.check_comments = true;
    config.check_end_names = true;
    let mut out: Vec<String> = Vec::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("{e} at {}", reader.error_position()))?;
        match event {
            quick_xml::events::Event::Eof => return Ok(out),
            quick_xml::events::Event::Start(e) => {
                out.push(format!("<{}", e.name().local_name().as_ref()))
            }
            quick_xml::events::Event::Empty(e) => {
                out.push(format!("<{}/", e.name().local_name().as_ref()))
            }
            quick_xml::events::Event::End(_) => out.push(">".into()),
            quick_xml::events::Event::Text(t) if t.is_empty() => {}
            quick_xml::events::Event::Text(t) => match out.last_mut() {
                Some(last) if last.starts_with("T:") => last.push_str(&t),
                _ => out.push(format!("T:{}", &*t)),
            },
            quick_xml::events::Event::GeneralRef(r) => out.push(format!("&{};", &*r)),
            quick_xml::events::Event::CData(c) => out.push(format!("C:{}", &*c)),
            quick_xml::events::Event::Comment(_)
            | quick_xml::events::Event::PI(_)
            | quick_xml::events::Event::Decl(_) => {}
            quick_xml::events::Event::DocType(_) => return Err("doctype".into()),
        }
    }
}
