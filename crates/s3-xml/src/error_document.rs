//! The S3 `<Error>` document (and the `<ErrorResponse>` form of STS/IAM).

use crate::Error;
use crate::common::{DecodeBody, required};
use crate::reader::XmlReader;

/// An error reported by the service: the body of a 4xx/5xx response, or of a
/// 200 response to CompleteMultipartUpload, CopyObject or UploadPartCopy.
///
/// Besides S3's `<Error>` root, the `<ErrorResponse><Error>...</Error>
/// <RequestId>...</RequestId></ErrorResponse>` form used by STS is accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ErrorDocument {
    /// `Code`, e.g. `NoSuchKey`, `SlowDown`.
    pub code: String,
    /// `Message`: human-readable description.
    pub message: Option<String>,
    /// `RequestId` (`x-amz-request-id`).
    pub request_id: Option<String>,
    /// `HostId` (`x-amz-id-2`).
    pub host_id: Option<String>,
    /// `Resource`.
    pub resource: Option<String>,
    /// `Region`: the bucket's region, on a wrong-region error.
    pub region: Option<String>,
    /// `BucketName`.
    pub bucket_name: Option<String>,
    /// `Key`.
    pub key: Option<String>,
    /// Every other text-only child (`Endpoint`, `ArgumentName`, STS `Type`,
    /// ...) as (element name, text), in document order. Children that
    /// themselves contain elements are skipped.
    pub other: Vec<(String, String)>,
}

impl ErrorDocument {
    /// The value of the first child in [`ErrorDocument::other`] named `name`.
    pub fn other(&self, name: &str) -> Option<&str> {
        self.other
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Reads the children of an `<Error>` element.
    fn decode_fields(
        &mut self,
        r: &mut XmlReader<'_>,
        code: &mut Option<String>,
    ) -> Result<(), Error> {
        while let Some(child) = r.next_child()? {
            match child {
                "Code" => r.put(code, "Code", XmlReader::string)?,
                "Message" => r.put(&mut self.message, "Message", XmlReader::string)?,
                "RequestId" => r.put(&mut self.request_id, "RequestId", XmlReader::string)?,
                "HostId" => r.put(&mut self.host_id, "HostId", XmlReader::string)?,
                "Resource" => r.put(&mut self.resource, "Resource", XmlReader::string)?,
                "Region" => r.put(&mut self.region, "Region", XmlReader::string)?,
                "BucketName" => r.put(&mut self.bucket_name, "BucketName", XmlReader::string)?,
                "Key" => r.put(&mut self.key, "Key", XmlReader::string)?,
                other => {
                    let name = other.to_owned();
                    r.count_entry()?;
                    if let Some(value) = r.text_if_leaf()? {
                        self.other.push((name, value));
                    }
                }
            }
        }
        Ok(())
    }
}

impl DecodeBody for ErrorDocument {
    const ROOT: &'static str = "Error";

    fn accepts_root(root: &str) -> bool {
        root == "Error" || root == "ErrorResponse"
    }

    fn decode_body(r: &mut XmlReader<'_>, root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        let mut code = None;
        if root == "ErrorResponse" {
            let mut seen_error = false;
            while let Some(child) = r.next_child()? {
                match child {
                    "Error" if !seen_error => {
                        seen_error = true;
                        out.decode_fields(r, &mut code)?;
                    }
                    "RequestId" => r.put(&mut out.request_id, "RequestId", XmlReader::string)?,
                    _ => r.skip()?,
                }
            }
        } else {
            out.decode_fields(r, &mut code)?;
        }
        out.code = required(code, r, "Error", "Code")?;
        Ok(out)
    }
}
