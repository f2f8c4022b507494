//! `ModuleKey`: a key held in a hardware security module (`crate::hsm`), with the methods of
//! the keys it stands in for: `Ed25519Signer`'s (`public_key`, `sign`, `sign_headers`),
//! `AESGCM`'s (`encrypt`, `decrypt`) and an HMAC's (`mac`).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::ingest;
use crate::hsm::{HsmError, KeyKind, ModuleKey, Token, TokenSelector};

// A hardware security module refused or failed an operation (the text names its answer): the
// Python class ``recordseal.crypto.errors.KeyModuleError``, under the crypto layer's one root
// ``CryptoError``, as the core's errors are ``recordseal.core.errors.CommitError``.
pyo3::import_exception!(recordseal.crypto.errors, KeyModuleError);

impl From<HsmError> for PyErr {
    fn from(error: HsmError) -> PyErr {
        KeyModuleError::new_err(error.0)
    }
}

/// A token of a module, logged in: where ``ModuleKey``s are found, generated and destroyed.
#[pyclass(module = "recordseal._native", name = "ModuleToken", frozen)]
pub struct PyModuleToken {
    token: Arc<Token>,
}

#[pymethods]
impl PyModuleToken {
    /// The token the keyword arguments name (each absent one matches any token) in the module
    /// at ``module_path``, logged in with ``pin``.
    #[new]
    #[pyo3(signature = (module_path, pin, *, token=None, serial=None, slot_id=None))]
    fn new(
        py: Python<'_>,
        module_path: &str,
        pin: &str,
        token: Option<String>,
        serial: Option<String>,
        slot_id: Option<u64>,
    ) -> PyResult<Self> {
        let selector = TokenSelector {
            label: token,
            serial,
            slot_id,
        };
        let token = py.detach(|| Token::open(module_path, &selector, pin))?;
        Ok(Self { token })
    }

    /// The key labelled ``label`` of ``kind`` (``ed25519``, ``aes256``, ``hmac-sha256``).
    fn key(&self, py: Python<'_>, label: &str, kind: &str) -> PyResult<PyModuleKey> {
        let kind = KeyKind::parse(kind)?;
        let key = py.detach(|| self.token.key(label, kind))?;
        Ok(PyModuleKey { key, kind })
    }

    /// A new key of ``kind`` labelled ``label``, generated inside the module (sensitive, not
    /// extractable); refused when the label is taken.
    fn generate(&self, py: Python<'_>, label: &str, kind: &str) -> PyResult<PyModuleKey> {
        let kind = KeyKind::parse(kind)?;
        let key = py.detach(|| self.token.generate(label, kind))?;
        Ok(PyModuleKey { key, kind })
    }

    /// Whether any object of the token is labelled ``label``.
    fn has(&self, py: Python<'_>, label: &str) -> PyResult<bool> {
        Ok(py.detach(|| self.token.has(label))?)
    }

    /// Destroys every object labelled ``label``; how many there were.
    fn destroy(&self, py: Python<'_>, label: &str) -> PyResult<usize> {
        Ok(py.detach(|| self.token.destroy(label))?)
    }
}

/// One key in a module (from ``ModuleToken.key`` or ``ModuleToken.generate``).
#[pyclass(module = "recordseal._native", name = "ModuleKey", frozen)]
pub struct PyModuleKey {
    key: ModuleKey,
    kind: KeyKind,
}

impl PyModuleKey {
    fn ensure(&self, kind: KeyKind, what: &str) -> PyResult<()> {
        if self.kind == kind {
            Ok(())
        } else {
            Err(KeyModuleError::new_err(format!(
                "an {} key cannot {what}",
                self.kind.name()
            )))
        }
    }
}

#[pymethods]
impl PyModuleKey {
    /// The 32-byte public key of an Ed25519 key.
    #[getter]
    fn public_key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.ensure(KeyKind::Ed25519, "give an Ed25519 public key")?;
        let public = py.detach(|| self.key.ed25519_public())?;
        Ok(PyBytes::new(py, &public))
    }

    /// The Ed25519 signature of ``prefix ‖ message``, made in the module.
    #[pyo3(
        signature = (message, prefix = b"".as_slice()),
        text_signature = "($self, message, prefix=b'')"
    )]
    fn sign<'py>(
        &self,
        py: Python<'py>,
        message: &[u8],
        prefix: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.ensure(KeyKind::Ed25519, "sign")?;
        let mut whole = Vec::with_capacity(prefix.len() + message.len());
        whole.extend_from_slice(prefix);
        whole.extend_from_slice(message);
        let signature = py.detach(|| self.key.sign_ed25519(&whole))?;
        Ok(PyBytes::new(py, &signature))
    }

    /// As ``Ed25519Signer.sign_headers``, each header signed in the module.
    fn sign_headers<'py>(
        &self,
        py: Python<'py>,
        key_id: &str,
        ingested_at: &str,
        records: &Bound<'py, PyAny>,
        slots: &Bound<'py, PyAny>,
        heads: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.ensure(KeyKind::Ed25519, "sign")?;
        ingest::sign_headers(py, &self.key, key_id, ingested_at, records, slots, heads)
    }

    /// As ``AESGCM.encrypt``: the ciphertext and its 16-byte tag, sealed in the module.
    #[pyo3(signature = (nonce, data, associated_data))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: &[u8],
        data: &[u8],
        associated_data: Option<&[u8]>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.ensure(KeyKind::Aes256, "encrypt")?;
        let aad = associated_data.unwrap_or_default();
        let sealed = py.detach(|| self.key.encrypt_gcm(nonce, data, aad))?;
        Ok(PyBytes::new(py, &sealed))
    }

    /// As ``AESGCM.decrypt``: raises ``cryptography.exceptions.InvalidTag`` when ``data``
    /// does not authenticate.
    #[pyo3(signature = (nonce, data, associated_data))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: &[u8],
        data: &[u8],
        associated_data: Option<&[u8]>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.ensure(KeyKind::Aes256, "decrypt")?;
        let aad = associated_data.unwrap_or_default();
        match py.detach(|| self.key.decrypt_gcm(nonce, data, aad))? {
            Some(plain) => Ok(PyBytes::new(py, &plain)),
            None => {
                let invalid = py
                    .import("cryptography.exceptions")?
                    .getattr("InvalidTag")?;
                Err(PyErr::from_value(invalid.call0()?))
            }
        }
    }

    /// HMAC-SHA-256 of ``message``, computed in the module.
    fn mac<'py>(&self, py: Python<'py>, message: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        self.ensure(KeyKind::HmacSha256, "compute an HMAC")?;
        let mac = py.detach(|| self.key.hmac_sha256(message))?;
        Ok(PyBytes::new(py, &mac))
    }

    fn __repr__(&self) -> String {
        format!("ModuleKey(<{} key in a module>)", self.kind.name())
    }
}
