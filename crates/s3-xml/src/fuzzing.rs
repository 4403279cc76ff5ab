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
    /// location, tagging, STS.
    Results,
    /// The error document and `decode_or_error` for the three documents that
    /// may hide an error in a 200.
    Errors,
    /// The request bodies (CompleteMultipartUpload, Delete, CreateBucketConfiguration).
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
