//! `read_request` (src/request.rs): an ingest request's body read once into `RecordRead`
//! objects that `prepare_records` commits without parsing again.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::jcs;
use crate::request::{self, Item, RecordRead};

/// Bodies above this many bytes are read with the interpreter detached.
const DETACH_BODY_LEN: usize = 8 * 1024;

/// One record of a request as read: its envelope, and its payload as a parsed tree. The tree
/// borrows the request's body, which the object keeps alive.
#[pyclass(frozen, name = "RecordRead", module = "recordseal._native")]
pub struct PyRecordRead {
    read: RecordRead<'static>,
    /// The bytes `read` borrows from.
    _body: Py<PyBytes>,
}

impl PyRecordRead {
    /// The read record, borrowed for as long as the object is.
    pub fn get(&self) -> &RecordRead<'_> {
        &self.read
    }
}

#[pymethods]
impl PyRecordRead {
    #[getter]
    fn stream(&self) -> &str {
        &self.read.stream
    }

    #[getter]
    fn record_type(&self) -> &str {
        &self.read.record_type
    }

    #[getter]
    fn occurred_at(&self) -> &str {
        &self.read.occurred_at
    }

    #[getter]
    fn subject_id(&self) -> &str {
        &self.read.subject_id
    }

    #[getter]
    fn payload_len(&self) -> Option<usize> {
        self.read.payload_len
    }

    /// ``(key, request hash)`` of a request sent with an ``Idempotency-Key``, else None.
    #[getter]
    fn idempotency<'py>(&self, py: Python<'py>) -> Option<(&str, Bound<'py, PyBytes>)> {
        let (key, hash) = self.read.idempotency.as_ref()?;
        Some((key.as_str(), PyBytes::new(py, hash)))
    }

    /// The ``CommitError`` of the first envelope rule the record breaks, else None.
    #[getter]
    fn refusal(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let error = self.read.refusal.clone()?;
        Some(PyErr::from(error).into_value(py).into_any())
    }

    /// The payload's RFC 8785 form.
    fn canonical_payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::new();
        jcs::write(&self.read.payload, &mut out);
        PyBytes::new(py, &out)
    }

    fn __repr__(&self) -> String {
        format!(
            "RecordRead(stream={:?}, refused={})",
            self.read.stream,
            self.read.refusal.is_some()
        )
    }
}

/// Reads the body of `POST /v1/records` (``batch`` false: one record) or of
/// `POST /v1/records:batch`: a `RecordRead` or the `CommitError` of each record, in order.
/// A fault of the body, of a batch's envelope or of the key raises its `CommitError`.
#[pyfunction]
#[pyo3(signature = (body, idempotency_key, batch))]
pub fn read_request<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyBytes>,
    idempotency_key: Option<&Bound<'py, PyString>>,
    batch: bool,
) -> PyResult<Bound<'py, PyList>> {
    // A key with no UTF-8 form has characters the rule refuses: one such stands in for it.
    let key = idempotency_key.map(|key| key.to_str().unwrap_or("\0"));
    let text = body.as_bytes();
    let read = || -> crate::Result<Vec<Item<'_>>> {
        if batch {
            request::read_batch(text, key)
        } else {
            request::read_record(text, key).map(|record| vec![Item::Record(record)])
        }
    };
    let items = if text.len() > DETACH_BODY_LEN {
        py.detach(read)
    } else {
        read()
    }?;
    // SAFETY: the items borrow `text`, the buffer of a bytes object, which CPython never
    // moves nor changes while the object lives; every `PyRecordRead` holds a strong
    // reference to it (`_body`) and lends its items only for as long as it is borrowed.
    let items: Vec<Item<'static>> = unsafe { std::mem::transmute(items) };
    let results = PyList::empty(py);
    for item in items {
        match item {
            Item::Record(read) => results.append(PyRecordRead {
                read,
                _body: body.clone().unbind(),
            })?,
            Item::Refused(error) => results.append(PyErr::from(error).into_value(py))?,
        }
    }
    Ok(results)
}
