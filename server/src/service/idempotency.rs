//! correlationID idempotency (CONTRACT.md "Conventions"): the same id with the same body
//! answers the existing resource, with another body `CORRELATION_ID_CONFLICT`.

use sha2::{Digest, Sha256};

/// A stable hash of the meaningful fields of a create request.
pub fn request_hash(fields: &serde_json::Value) -> String {
    // serde_json maps keep keys sorted, so equal requests serialise equally.
    let digest = Sha256::digest(fields.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
