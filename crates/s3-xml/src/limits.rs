//! Bounds on what a decoder accepts.

/// Bounds applied to every decoded document.
///
/// Remote XML is untrusted: these keep a hostile or broken server from making
/// the decoder use unbounded memory or time. The byte limit is the caller's
/// choice (a transport should also stop reading a body that exceeds it); the
/// other two have defaults far above anything S3 sends.
///
/// ```
/// let limits = s3_xml::Limits::new(4 << 20).with_max_entries(20_000);
/// assert_eq!(limits.max_bytes(), 4 << 20);
/// assert_eq!(limits.max_depth(), s3_xml::Limits::DEFAULT_MAX_DEPTH);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    max_bytes: usize,
    max_depth: usize,
    max_entries: usize,
}

impl Limits {
    /// Default byte limit: 16 MiB. A 1,000-key listing page with 1,024-byte keys
    /// that are fully entity-escaped stays below 7 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 16 << 20;
    /// Default nesting limit. S3 documents nest at most 4–5 levels.
    pub const DEFAULT_MAX_DEPTH: usize = 32;
    /// Default limit on list entries per document (objects, common prefixes,
    /// versions, parts, uploads, buckets, tags, ...). S3 pages hold at most
    /// 10,000 (ListBuckets).
    pub const DEFAULT_MAX_ENTRIES: usize = 100_000;

    /// Limits with the given byte limit and default depth and entry limits.
    pub const fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_entries: Self::DEFAULT_MAX_ENTRIES,
        }
    }

    /// Sets the maximum element nesting depth (the root element is depth 1).
    #[must_use]
    pub const fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// Sets the maximum number of list entries in one document.
    #[must_use]
    pub const fn with_max_entries(mut self, max_entries: usize) -> Self {
        self.max_entries = max_entries;
        self
    }

    /// The largest document accepted, in bytes.
    pub const fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The deepest element nesting accepted.
    pub const fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The most list entries accepted in one document.
    pub const fn max_entries(&self) -> usize {
        self.max_entries
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_BYTES)
    }
}
