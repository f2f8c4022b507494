//! `derive_subject_keys`: a subject's salt and payload keys (`crate::subject_keys`), the fast
//! path of `recordseal.crypto.vault.SubjectKeys.derive`, whose fallback is `cryptography`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::subject_keys;

/// ``(salt_key, payload_key)`` of a 32-byte subject key; ValueError for any other length.
#[pyfunction]
pub(super) fn derive_subject_keys<'py>(
    py: Python<'py>,
    subject_key: &[u8],
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let keys = subject_keys::derive(subject_key)
        .map_err(|error| PyValueError::new_err(error.to_string()))?;
    Ok((
        PyBytes::new(py, &keys.salt_key),
        PyBytes::new(py, &keys.payload_key),
    ))
}
