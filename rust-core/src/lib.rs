//! recordseal commitment core: RFC 8785 canonical JSON, field kinds, salted commitments and
//! RFC 6962 Merkle trees, exactly as docs/spec.md describes them.

pub mod answer;
pub mod commitment;
pub mod datetime;
pub mod declarations;
pub mod error;
pub mod hsm;
pub mod ingest;
pub mod jcs;
pub mod json;
pub mod kinds;
pub mod leaves;
pub mod log;
pub mod member_order;
pub mod merkle;
pub mod number;
pub mod path;
pub mod placing;
#[cfg(feature = "python")]
mod python;
pub mod record_id;
pub mod request;
pub mod sha256;
pub mod subject_keys;

pub use error::{Code, Error, Result};
