//! The managed transfers (`s3-wire-tokio/src/transfer/`) and the fault store they are proven
//! against, in one test binary (one link, and the fault store compiled once):
//!
//! - `fault_store.rs`: a stateful in-memory S3 on loopback with seeded fault injection;
//!   `fault_store_selftest.rs` checks it against the client's single-request API;
//! - `local_s3.rs`: transfers against `tools/local-s3` (s3s-fs) at the part boundaries;
//! - `faults.rs`: the seeded fault campaign and single behaviours (pinning, per-part
//!   verification, lost answers, the stale-upload sweep, the memory cap);
//! - `directory.rs`: directory transfers (2,000 files through faults, sync, policies);
//! - `recovery.rs`: resumption after SIGKILL, changed sources, cancellation at every stage;
//! - `access_modes.rs`: anonymous, Requester Pays, access points, S3 Express, FIPS /
//!   dual-stack / acceleration hosts, through a TLS gateway in front of the fault store;
//! - `download_resume.rs`: downloads to a file resumed after SIGKILL or a failure, and
//!   started over when the object changed;
//! - `measure.rs`: measurements against a real store, run on request (they write into
//!   `measurements/`);
//! - `store_quirks.rs`: real stores' deviations, imitated by the fault store, and what the
//!   client does about each.

#[path = "../support/mod.rs"]
mod support;

mod fault_store;
mod helpers;

mod access_modes;
mod directory;
mod download_resume;
mod fault_store_selftest;
mod faults;
mod local_s3;
mod measure;
mod recovery;
mod sse_c;
mod store_quirks;
