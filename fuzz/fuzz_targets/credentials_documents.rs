//! The JSON credential documents (`credential_process` output, container / instance
//! metadata, SSO role credentials, the SSO token cache and the OIDC refresh answer) on
//! arbitrary bytes. Must never panic; an accepted
//! document has keys; a refusal never shows a value of the document. The same logic runs
//! under proptest in `crates/s3-wire-tokio/src/fuzzing.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire_credentials::fuzzing::credential_documents_arbitrary(data);
});
