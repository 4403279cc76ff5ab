//! Managed copies: CopyObject up to 5 GiB (CopyObject's limit), parallel UploadPartCopy
//! above it through the multipart driver, with the same progress, cancellation and
//! integrity rules as uploads. Every request is pinned to the source's ETag
//! (`x-amz-copy-source-if-match`), so a source replaced mid-copy fails the copy.

use std::sync::Arc;

use s3_multipart_plan::UploadScheduler;
use s3_ops::ops::copy_object::{CopyObject, Directive};
use s3_ops::ops::copy_source::CopySource;
use s3_ops::{BucketName, Checksum, ChecksumAlgorithm, ObjectAttributes, ObjectKey};

use crate::client::Client;
use crate::error::{Cleanup, Error, TransferErrorKind};
use crate::progress::{Listener, PartProgress};
use crate::transfer::handle::{Control, TransferHandle};
use crate::transfer::integrity::{self, Expected};
use crate::transfer::multipart::{Driver, Parts, Target, copy_source_changed};
use crate::transfer::upload::UploadOutput;
use crate::transfer::{
    TransferOptions, await_starts, multipart_options, plan_error, transfer_option_setters,
};
use crate::verification::{NotVerified, Verification};

/// What a successful copy stored (the same fields as an upload's).
pub type CopyOutput = UploadOutput;

/// A managed copy to be started; made by [`Client::copy`].
#[must_use = "a copy does nothing until it is started or awaited"]
pub struct CopyBuilder {
    client: Client,
    source: CopySource,
    bucket: BucketName,
    key: ObjectKey,
    options: TransferOptions,
    attributes: Option<ObjectAttributes>,
    create_only: bool,
    /// `None` until chosen: then the source's full-object algorithm, else the client's.
    checksum: Option<Option<ChecksumAlgorithm>>,
    listener: Option<Listener>,
}

impl Client {
    /// A managed server-side copy of `source` to `key` in `bucket`. Objects up to 5 GiB
    /// (the single-request limit of copies) are copied by one CopyObject, larger ones by
    /// UploadPartCopy requests in parallel; the copy keeps the source's content headers and
    /// metadata unless [`attributes`](CopyBuilder::attributes) replaces them.
    pub fn copy(&self, source: CopySource, bucket: BucketName, key: ObjectKey) -> CopyBuilder {
        CopyBuilder {
            client: self.clone(),
            source,
            bucket,
            key,
            options: self.inner.transfer_options,
            attributes: None,
            create_only: false,
            checksum: None,
            listener: None,
        }
    }
}

impl CopyBuilder {
    transfer_option_setters!();

    /// The new object's description instead of the source's.
    pub fn attributes(mut self, attributes: ObjectAttributes) -> Self {
        self.attributes = Some(attributes);
        self
    }

    /// Copy only if no object exists under the destination key.
    pub fn create_only(mut self) -> Self {
        self.create_only = true;
        self
    }

    /// The new object's checksum algorithm, computed by the store; `None` asks for none.
    /// By default the source's full-object algorithm if it has one (so the new object's
    /// value can be compared with the source's), otherwise the client's
    /// [`upload_checksum`](crate::ClientBuilder::upload_checksum); a client without one
    /// asks for none.
    pub fn checksum(mut self, algorithm: Option<ChecksumAlgorithm>) -> Self {
        self.checksum = Some(algorithm);
        self
    }

    /// Starts the copy as a task; must be called within a Tokio runtime.
    pub fn start(self) -> TransferHandle<CopyOutput> {
        let listener = self.listener.clone();
        TransferHandle::start(None, listener, |control| run(self, control))
    }
}

await_starts!(CopyBuilder => CopyOutput);

async fn run(builder: CopyBuilder, control: Arc<Control>) -> Result<CopyOutput, Error> {
    let CopyBuilder {
        client,
        source,
        bucket,
        key,
        options,
        attributes,
        create_only,
        checksum,
        listener: _,
    } = builder;
    let failed = |error: Error| {
        error.with_transfer(crate::error::TransferFailure::new(None, Cleanup::Nothing))
    };
    let head = client
        .head_object(source.head_object().checksum_mode(true))
        .await
        .map_err(failed)?;
    let size = head.content_length.ok_or_else(|| {
        failed(Error::transfer_error(TransferErrorKind::Inconsistent(
            "the source's HeadObject has no Content-Length".to_owned(),
        )))
    })?;
    control.progress.set_total(size);
    // Pin every request to the object just looked at.
    let source = match head.etag.as_ref().filter(|etag| !etag.is_weak()) {
        Some(etag) => source.if_match(etag.as_str()),
        None => source,
    };
    // The source's full-object checksum (a composite one covers part checksums, not bytes).
    let source_full = head
        .checksums
        .validator()
        .filter(|_| !head.checksums.is_composite())
        .map(|validator| validator.expected().clone());
    let checksum = checksum.unwrap_or_else(|| {
        let default = client.inner.integrity.upload_checksum;
        default.and(source_full.as_ref().map(Checksum::algorithm).or(default))
    });
    // What the store accepts for one CopyObject (the multipart path narrows it below).
    let quirks = *client.provider_quirks();
    let checksum = quirks.upload_checksum(checksum);
    let source_checksum = checksum.and_then(|algorithm| {
        source_full
            .clone()
            .filter(|full| full.algorithm() == algorithm)
    });
    let limit = options
        .single_request_limit
        .unwrap_or(TransferOptions::DEFAULT_COPY_OBJECT_LIMIT);
    if control.is_cancelled() {
        return Err(failed(Error::transfer_error(TransferErrorKind::Cancelled)));
    }
    if create_only {
        // Refused before anything is sent where the store would ignore the condition.
        quirks
            .check_create_only(size <= limit)
            .map_err(|e| failed(e.into()))?;
    }
    if size <= limit {
        return copy_whole(
            &client,
            &control,
            source,
            bucket,
            key,
            attributes,
            create_only,
            checksum,
            size,
            source_checksum,
        )
        .await;
    }
    let multipart_algorithm = quirks.multipart_checksum(checksum, integrity::checksum_type);
    let source_checksum =
        source_checksum.filter(|source| Some(source.algorithm()) == multipart_algorithm);
    let target = Arc::new(Target {
        single_request_algorithm: checksum,
        client,
        bucket,
        key,
        // Parts carry no metadata: the new upload takes the source's unless replaced.
        attributes: attributes.unwrap_or_else(|| ObjectAttributes::from_head(&head)),
        create_only,
        algorithm: multipart_algorithm,
        progress: control.progress.clone(),
    });
    let multipart = multipart_options(&options).map_err(failed)?;
    let scheduler = UploadScheduler::new(size, &multipart).map_err(|e| failed(plan_error(e)))?;
    let mut stored = Driver::new(target, control, scheduler, Parts::Copy(source), None)
        .run()
        .await?;
    stored.verification =
        against_source(&stored.verification, source_checksum.as_ref()).map_err(failed)?;
    Ok(stored)
}

/// A copy's verification: the store's checksum of the new object must be the source's
/// (the bytes of both are the store's; only equal values prove they are the same bytes).
/// Different values of one algorithm mean the new object does not hold the source's
/// bytes: a checksum error (the copy is not undone; the error says which key holds what).
fn against_source(stored: &Verification, source: Option<&Checksum>) -> Result<Verification, Error> {
    Ok(match (stored, source) {
        (Verification::FullObject(new), Some(source)) if new == source => {
            Verification::FullObject(new.clone())
        }
        (Verification::FullObject(new), Some(source)) => {
            return Err(Error::from(s3_ops::Error::ChecksumMismatch {
                algorithm: source.algorithm(),
                expected: source.to_base64(),
                computed: new.to_base64(),
            })
            .with_source(
                "the copy's new object has another checksum than its source: it was written, \
                 but does not hold the source's bytes",
            ));
        }
        (Verification::FullObject(_), None) => {
            Verification::NotVerified(NotVerified::StoreSentNone)
        }
        (other, _) => other.clone(),
    })
}

#[allow(clippy::too_many_arguments)]
async fn copy_whole(
    client: &Client,
    control: &Control,
    source: CopySource,
    bucket: BucketName,
    key: ObjectKey,
    attributes: Option<ObjectAttributes>,
    create_only: bool,
    checksum: Option<ChecksumAlgorithm>,
    size: u64,
    source_checksum: Option<Checksum>,
) -> Result<CopyOutput, Error> {
    let failed = |error: Error| {
        error.with_transfer(crate::error::TransferFailure::new(None, Cleanup::Nothing))
    };
    // The new object's SSE-C key, which its confirmation HEAD needs too.
    let customer_key = attributes
        .as_ref()
        .and_then(ObjectAttributes::sse_customer_key)
        .cloned();
    let mut copy = CopyObject::new(source, bucket.clone(), key.clone());
    if let Some(attributes) = attributes {
        copy = copy
            .attributes(attributes)
            .metadata_directive(Directive::Replace)
            .tagging_directive(Directive::Replace);
    }
    if let Some(algorithm) = checksum {
        copy = copy.checksum_algorithm(algorithm);
    }
    if create_only {
        copy = copy.if_none_match_any();
    }
    let progress = PartProgress::new(control.progress.clone());
    progress.moved(size);
    let (etag, version_id, stored_checksum) = match client.copy_object(copy).await {
        Ok(output) => {
            let stored = checksum
                .and_then(|a| Checksum::from_xml(&output.result.checksums, a).and_then(Result::ok));
            (output.result.etag, output.version_id, stored)
        }
        Err(error)
            if create_only
                && error.is_precondition_failed()
                && integrity::may_have_taken_effect(&error) =>
        {
            let expected = Expected {
                bucket: &bucket,
                key: &key,
                size,
                etag: None,
                parts: None,
                checksum: source_checksum.as_ref(),
                sse_customer_key: customer_key.as_ref(),
            };
            match integrity::stored_object_matches(client, &expected).await {
                Ok(Some(head)) => (head.etag, head.version_id, source_checksum.clone()),
                _ => {
                    progress.abandon();
                    return Err(failed(copy_source_changed(error)));
                }
            }
        }
        Err(error) => {
            progress.abandon();
            return Err(failed(copy_source_changed(error)));
        }
    };
    progress.commit(size);
    let verification = match (checksum, &stored_checksum) {
        (None, _) => Verification::NotVerified(NotVerified::Disabled),
        (Some(_), Some(stored)) => against_source(
            &Verification::FullObject(stored.clone()),
            source_checksum.as_ref(),
        )
        .map_err(failed)?,
        (Some(_), None) => Verification::NotVerified(NotVerified::StoreSentNone),
    };
    Ok(CopyOutput {
        size,
        etag,
        version_id,
        upload_id: None,
        parts: None,
        resumed_parts: 0,
        checksum: stored_checksum,
        verification,
        possible_orphan: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_object_must_have_the_source_value() {
        let source = ChecksumAlgorithm::Crc32.checksum(b"source bytes");
        let other = ChecksumAlgorithm::Crc32.checksum(b"other bytes");
        let full = |c: &Checksum| Verification::FullObject(c.clone());
        assert_eq!(
            against_source(&full(&source), Some(&source)).unwrap(),
            full(&source)
        );
        let error = against_source(&full(&other), Some(&source)).unwrap_err();
        assert!(
            matches!(
                error.kind(),
                crate::ErrorKind::Operation(s3_ops::Error::ChecksumMismatch { expected, .. })
                    if *expected == source.to_base64()
            ),
            "{error:?}"
        );
        assert_eq!(
            against_source(&full(&other), None).unwrap(),
            Verification::NotVerified(NotVerified::StoreSentNone)
        );
        let disabled = Verification::NotVerified(NotVerified::Disabled);
        assert_eq!(against_source(&disabled, Some(&source)).unwrap(), disabled);
    }
}
