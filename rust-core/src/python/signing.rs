//! `Ed25519Signer`: the hosted ingest key's signatures, from the `ed25519-dalek` crate.

use ed25519_dalek::{Signer, SigningKey};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::ingest;

/// An Ed25519 private key (RFC 8032) made from its 32-byte seed.
#[pyclass(module = "recordseal._native", name = "Ed25519Signer", frozen)]
pub struct PyEd25519Signer {
    key: SigningKey,
}

#[pymethods]
impl PyEd25519Signer {
    #[new]
    fn new(seed: &[u8]) -> PyResult<Self> {
        let seed: [u8; 32] = seed
            .try_into()
            .map_err(|_| PyValueError::new_err("an Ed25519 seed is 32 bytes"))?;
        Ok(Self {
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// The 32-byte public key.
    #[getter]
    fn public_key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.key.verifying_key().as_bytes())
    }

    /// The 64-byte signature of ``message`` (``prefix`` is signed first, then ``message``:
    /// the two are one message, joined without a copy in Python).
    #[pyo3(
        signature = (message, prefix = b"".as_slice()),
        text_signature = "($self, message, prefix=b'')"
    )]
    fn sign<'py>(&self, py: Python<'py>, message: &[u8], prefix: &[u8]) -> Bound<'py, PyBytes> {
        let signature = if prefix.is_empty() {
            self.key.sign(message)
        } else {
            let mut whole = Vec::with_capacity(prefix.len() + message.len());
            whole.extend_from_slice(prefix);
            whole.extend_from_slice(message);
            self.key.sign(&whole)
        };
        PyBytes::new(py, &signature.to_bytes())
    }

    /// Places, signs and chains prepared records in one call (the interpreter detached):
    /// record ``i`` takes ``heads[slots[i]]`` as its seq and ``prev``; ``heads`` ends as the
    /// final heads. ``(seq, header, signature, chain_leaf)`` of each record, in order.
    fn sign_headers<'py>(
        &self,
        py: Python<'py>,
        key_id: &str,
        ingested_at: &str,
        records: &Bound<'py, PyAny>,
        slots: &Bound<'py, PyAny>,
        heads: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyList>> {
        ingest::sign_headers(py, &self.key, key_id, ingested_at, records, slots, heads)
    }

    fn __repr__(&self) -> &'static str {
        "Ed25519Signer(<private>)"
    }
}
