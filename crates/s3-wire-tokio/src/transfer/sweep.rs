//! Sweeping multipart uploads that nobody will complete: what a crashed process (or a lost
//! CreateMultipartUpload answer) leaves behind keeps its parts stored, and billed, until it
//! is aborted.

use std::path::Path;
use std::time::{Duration, SystemTime};

use s3_ops::BucketName;
use s3_ops::ops::abort_multipart_upload::AbortMultipartUpload;
use s3_ops::ops::list_multipart_uploads::ListMultipartUploads;

use crate::client::Client;
use crate::error::Error;
use crate::transfer::journal;

/// One multipart upload found by [`Client::abort_stale_uploads`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StaleUpload {
    /// The key it was uploading to.
    pub key: String,
    /// Its upload id.
    pub upload_id: String,
    /// When it was initiated.
    pub initiated: Option<SystemTime>,
}

/// What [`Client::abort_stale_uploads`] did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct StaleUploads {
    /// Uploads aborted.
    pub aborted: Vec<StaleUpload>,
    /// Uploads whose abort failed, with the error.
    pub failed: Vec<(StaleUpload, Error)>,
    /// Uploads under the prefix that are younger than the cut-off, left alone.
    pub kept: usize,
}

/// The upload a resume journal named, aborted by [`Client::discard_upload_journal`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DiscardedUpload {
    /// The bucket it was uploading to.
    pub bucket: String,
    /// The key it was uploading to.
    pub key: String,
    /// Its upload id.
    pub upload_id: String,
}

impl Client {
    /// Gives up the upload a resume journal ([`UploadBuilder::journal`]) describes: aborts
    /// its multipart upload (one the store no longer knows counts as aborted), then removes
    /// the journal. `Ok(None)` if there is no journal at `path`.
    ///
    /// Starting over without this leaves the journal's upload open, its parts stored and
    /// billed. If the abort fails, the journal is kept (it is the only record of the upload
    /// id) and the error returned; a file that is not a readable journal names no upload,
    /// so it is kept too and the error says why.
    ///
    /// [`UploadBuilder::journal`]: crate::transfer::UploadBuilder::journal
    pub async fn discard_upload_journal(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<Option<DiscardedUpload>, Error> {
        let path = path.as_ref();
        let Some((header, snapshot)) = journal::load(path).await? else {
            return Ok(None);
        };
        let bucket = crate::ops::bucket(&header.bucket)?;
        let upload = StaleUpload {
            key: header.key.clone(),
            upload_id: snapshot.upload_id().to_owned(),
            initiated: None,
        };
        self.abort_one(&bucket, &upload).await?;
        journal::remove(path).await?;
        Ok(Some(DiscardedUpload {
            bucket: header.bucket,
            key: header.key,
            upload_id: upload.upload_id,
        }))
    }

    /// Aborts every multipart upload under `prefix` in `bucket` initiated more than
    /// `older_than` ago (uploads without an initiation time are kept), page by page
    /// (ListMultipartUploads). An upload the store no longer knows counts as aborted.
    ///
    /// Choose `older_than` longer than any upload in progress may take: a running upload
    /// whose upload is aborted fails.
    ///
    /// A store that cannot list multipart uploads (its profile says so, or it answers
    /// `501 NotImplemented`; s3s-fs) cannot be swept: the error is
    /// [`s3_ops::InvalidInput::Unsupported`] with
    /// [`Feature::ListMultipartUploads`](s3_ops::provider::Feature::ListMultipartUploads),
    /// whose message tells the operator to set a lifecycle rule
    /// (AbortIncompleteMultipartUpload) on the bucket instead.
    pub async fn abort_stale_uploads(
        &self,
        bucket: &BucketName,
        prefix: &str,
        older_than: Duration,
    ) -> Result<StaleUploads, Error> {
        self.inner.quirks.check_list_multipart_uploads()?;
        let cutoff = SystemTime::now().checked_sub(older_than);
        let mut listing = ListMultipartUploads::new(bucket.clone());
        if !prefix.is_empty() {
            listing = listing.prefix(prefix);
        }
        let mut pages = self.list_multipart_uploads_pages(listing);
        let mut swept = StaleUploads::default();
        while let Some(page) = pages.next_page().await {
            let page = page.map_err(|error| self.unlisted(error))?;
            for upload in page.result.uploads {
                let initiated = upload.initiated.and_then(|at| at.to_system_time());
                let stale = match (initiated, cutoff) {
                    (Some(initiated), Some(cutoff)) => initiated < cutoff,
                    _ => false,
                };
                let found = StaleUpload {
                    key: upload.key,
                    upload_id: upload.upload_id,
                    initiated,
                };
                if !stale {
                    swept.kept += 1;
                    continue;
                }
                match self.abort_one(bucket, &found).await {
                    Ok(()) => swept.aborted.push(found),
                    Err(error) => swept.failed.push((found, error)),
                }
            }
        }
        Ok(swept)
    }

    /// A ListMultipartUploads failure, as what it means when the store does not implement the
    /// operation: uploads cannot be listed here.
    pub(crate) fn unlisted(&self, error: Error) -> Error {
        if !error.is_not_implemented() {
            return error;
        }
        let feature = s3_ops::provider::Feature::ListMultipartUploads;
        let unsupported = self.inner.quirks.unsupported_error(feature);
        Error::caused_by(crate::ErrorKind::Operation(unsupported), error)
    }

    async fn abort_one(&self, bucket: &BucketName, upload: &StaleUpload) -> Result<(), Error> {
        let key = crate::ops::key(&upload.key)?;
        let abort = AbortMultipartUpload::new(bucket.clone(), key, upload.upload_id.clone());
        match self.abort_multipart_upload(abort).await {
            Ok(_) => Ok(()),
            Err(error)
                if error
                    .service_error()
                    .is_some_and(|e| e.code == "NoSuchUpload") =>
            {
                Ok(())
            }
            Err(error) => Err(error),
        }
    }
}
