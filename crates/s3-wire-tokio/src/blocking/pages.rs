//! Listings for blocking code: an iterator of pages, and of the objects in them.

use std::collections::VecDeque;

use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_xml::Object;

use super::Client;
use crate::error::Error;
use crate::paginate::{Paginated, Paginator};

/// Every page of a listing, each requested when the iterator is advanced to it (on the
/// calling thread, the client's runtime driving its I/O). It ends after the last page, or
/// after an error, which it yields (see [`crate::Paginator`]).
pub struct Pages<O: Paginated>
where
    O::Output: Send,
{
    pages: Option<Paginator<O>>,
    client: Client,
}

impl<O: Paginated> Pages<O>
where
    O::Output: Send,
{
    pub(super) fn new(pages: Paginator<O>, client: Client) -> Self {
        Self {
            pages: Some(pages),
            client,
        }
    }
}

impl<O: Paginated> Iterator for Pages<O>
where
    O::Output: Send,
{
    type Item = Result<O::Output, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let page = self.client.block_on(self.pages.as_mut()?.next_page());
        if page.is_none() {
            self.pages = None;
        }
        page
    }
}

impl Pages<ListObjectsV2> {
    /// The objects of every page, in order (common prefixes are not included).
    pub fn objects(self) -> Objects {
        Objects {
            pages: self,
            current: VecDeque::new(),
            failed: false,
        }
    }
}

/// The objects of a ListObjectsV2 listing, page after page (see [`Pages::objects`]).
pub struct Objects {
    pages: Pages<ListObjectsV2>,
    current: VecDeque<Object>,
    failed: bool,
}

impl Iterator for Objects {
    type Item = Result<Object, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(object) = self.current.pop_front() {
                return Some(Ok(object));
            }
            if self.failed {
                return None;
            }
            match self.pages.next()? {
                Ok(page) => self.current.extend(page.result.contents),
                Err(error) => {
                    self.failed = true;
                    return Some(Err(error));
                }
            }
        }
    }
}

impl<O: Paginated + std::fmt::Debug> std::fmt::Debug for Pages<O>
where
    O::Output: Send,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Pages")
            .field("pages", &self.pages)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Objects")
            .field("buffered", &self.current.len())
            .finish_non_exhaustive()
    }
}
