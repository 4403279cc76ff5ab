//! The S3 XML documents, decoded and encoded over `quick-xml`.
//!
//! Remote XML is untrusted input: decoding is bounded (bytes, depth, entries),
//! strict about values, rejects DTDs and entity declarations, and never panics.
//! No I/O.
//!
//! **Dependency rule:** `quick-xml` only; never a runtime, never `http`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
