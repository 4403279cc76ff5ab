//! Lazy paginated listings: a [`Stream`] of pages that requests the next page
//! only when the consumer asks for it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use s3_ops::Operation;
use s3_ops::ops::list_buckets::ListBuckets;
use s3_ops::ops::list_multipart_uploads::ListMultipartUploads;
use s3_ops::ops::list_object_versions::ListObjectVersions;
use s3_ops::ops::list_objects::ListObjects;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_ops::ops::list_parts::ListParts;

use crate::client::Client;
use crate::error::Error;

/// A listing operation that knows the request for its next page.
pub trait Paginated: Operation + Clone + PartialEq + Send + Sync + Unpin + Sized + 'static
where
    Self::Output: Send,
{
    /// The request for the page after `output`, `None` after the last page.
    fn next_page(&self, output: &Self::Output) -> Option<Self>;

    /// This request without `encoding-type=url`, if it asks for it.
    fn without_url_encoding(&self) -> Option<Self> {
        None
    }

    /// Sends this page's request (ListObjectsV2's switches to version 1 where the store
    /// serves only that).
    fn send<'a>(
        &'a self,
        client: &'a Client,
    ) -> Pin<Box<dyn Future<Output = Result<Self::Output, Error>> + Send + 'a>> {
        Box::pin(client.send_ref(self))
    }
}

macro_rules! paginated {
    ($($op:ty),*) => {$(
        impl Paginated for $op {
            fn next_page(&self, output: &Self::Output) -> Option<Self> {
                <$op>::next_page(self, output)
            }
        }
    )*};
}
paginated!(ListParts, ListBuckets);

/// Listings of keys, which ask for `encoding-type=url`.
macro_rules! paginated_keys {
    ($($op:ty),*) => {$(
        impl Paginated for $op {
            fn next_page(&self, output: &Self::Output) -> Option<Self> {
                <$op>::next_page(self, output)
            }

            fn without_url_encoding(&self) -> Option<Self> {
                self.uses_url_encoding()
                    .then(|| self.clone().url_encoding(false))
            }
        }
    )*};
}
paginated_keys!(ListObjects, ListObjectVersions, ListMultipartUploads);

impl Paginated for ListObjectsV2 {
    fn next_page(&self, output: &Self::Output) -> Option<Self> {
        ListObjectsV2::next_page(self, output)
    }

    fn without_url_encoding(&self) -> Option<Self> {
        self.uses_url_encoding()
            .then(|| self.clone().url_encoding(false))
    }

    fn send<'a>(
        &'a self,
        client: &'a Client,
    ) -> Pin<Box<dyn Future<Output = Result<Self::Output, Error>> + Send + 'a>> {
        Box::pin(client.list_objects_v2(self.clone()))
    }
}

type PageFuture<O> =
    Pin<Box<dyn Future<Output = (O, Result<<O as Operation>::Output, Error>)> + Send>>;

/// A lazy stream of listing pages, made by the `*_pages` methods of
/// [`Client`]. Each poll after a page sends the next request. A key listing that the server
/// answers with `EncodingType=url` but unencoded values is asked again without
/// `encoding-type` (see [`Error::is_unencoded_listing`]), and so are its next pages. The
/// stream ends
/// after the last page, after an error (which it yields), or when the service
/// answers with the same continuation token (markers) that was just sent —
/// a server bug that would otherwise loop forever.
pub struct Paginator<O: Paginated>
where
    O::Output: Send,
{
    client: Client,
    next: Option<O>,
    in_flight: Option<PageFuture<O>>,
}

impl<O: Paginated> Paginator<O>
where
    O::Output: Send,
{
    pub(crate) fn new(client: Client, first: O) -> Self {
        Self {
            client,
            next: Some(first),
            in_flight: None,
        }
    }

    /// The next page, `None` at the end.
    pub async fn next_page(&mut self) -> Option<Result<O::Output, Error>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }
}

impl<O: Paginated> Stream for Paginator<O>
where
    O::Output: Send,
{
    type Item = Result<O::Output, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.in_flight.is_none() {
            let Some(op) = this.next.take() else {
                return Poll::Ready(None);
            };
            let client = this.client.clone();
            this.in_flight = Some(Box::pin(async move {
                match op.send(&client).await {
                    Err(error) if error.is_unencoded_listing() => match op.without_url_encoding() {
                        // The server echoes `EncodingType=url` but ignores it: the same page
                        // again without it. The pages after are asked for without it too,
                        // as they follow from this request.
                        Some(raw) => {
                            let result = raw.send(&client).await;
                            (raw, result)
                        }
                        None => (op, Err(error)),
                    },
                    result => (op, result),
                }
            }));
        }
        let Some(in_flight) = this.in_flight.as_mut() else {
            return Poll::Ready(None);
        };
        let (op, result) = std::task::ready!(in_flight.as_mut().poll(cx));
        this.in_flight = None;
        if let Ok(output) = &result {
            // A next request equal to the one just sent carries the same
            // continuation token: following it would repeat the page forever.
            this.next = op.next_page(output).filter(|next| *next != op);
        }
        Poll::Ready(Some(result))
    }
}

impl<O: Paginated + fmt::Debug> fmt::Debug for Paginator<O>
where
    O::Output: Send,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Paginator")
            .field("next", &self.next)
            .field("in_flight", &self.in_flight.is_some())
            .finish()
    }
}

impl Client {
    /// `ListObjectsV2` as a lazy stream of pages, each sent as [`Client::list_objects_v2`]
    /// sends it (with ListObjects, version 1, where the store serves only that).
    pub fn list_objects_v2_pages(&self, first: ListObjectsV2) -> Paginator<ListObjectsV2> {
        Paginator::new(self.clone(), first)
    }

    /// `ListObjects` (version 1) as a lazy stream of pages, for stores that do not serve
    /// ListObjectsV2 (see [`ProviderQuirks::list_objects_v2`](s3_ops::ProviderQuirks)):
    /// continued by marker, keys URL-encoded on the wire and decoded, as
    /// [`Client::list_objects_v2_pages`].
    pub fn list_objects_pages(&self, first: ListObjects) -> Paginator<ListObjects> {
        Paginator::new(self.clone(), first)
    }

    /// `ListObjectVersions` as a lazy stream of pages.
    pub fn list_object_versions_pages(
        &self,
        first: ListObjectVersions,
    ) -> Paginator<ListObjectVersions> {
        Paginator::new(self.clone(), first)
    }

    /// `ListParts` as a lazy stream of pages.
    pub fn list_parts_pages(&self, first: ListParts) -> Paginator<ListParts> {
        Paginator::new(self.clone(), first)
    }

    /// `ListMultipartUploads` as a lazy stream of pages.
    pub fn list_multipart_uploads_pages(
        &self,
        first: ListMultipartUploads,
    ) -> Paginator<ListMultipartUploads> {
        Paginator::new(self.clone(), first)
    }

    /// `ListBuckets` as a lazy stream of pages.
    pub fn list_buckets_pages(&self, first: ListBuckets) -> Paginator<ListBuckets> {
        Paginator::new(self.clone(), first)
    }
}
