//! The Python module `recordseal._native`: this module and its submodules (`answer`, `args`,
//! `ingest`, `log`, `placing`, `request`, `signing`, `subject_keys`) hold every PyO3 item of the crate.
//!
//! Arguments are borrowed from Python objects (no copies of payloads or leaves), large inputs
//! are processed with the interpreter detached, and `commit_record` returns one object whose
//! getters convert on access.

mod answer;
mod args;
mod hsm;
mod ingest;
mod log;
mod placing;
mod request;
mod signing;
mod subject_keys;

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use self::args::{
    beyond_u64, byte_items, declaration_items, declaration_strs, detach_if, hash_list, int_arg,
    kind_name, record_id_str, slices, stream_declarations, value_of, Int,
};
use crate::commitment;
use crate::declarations::Declarations;
use crate::error::{Code, Error};
use crate::kinds::{self, Kind};
use crate::leaves::{self, CommittedRecord};
use crate::{jcs, merkle};

pyo3::import_exception!(recordseal.core.errors, CommitError);

impl From<Error> for PyErr {
    fn from(error: Error) -> PyErr {
        CommitError::new_err((error.code.as_str(), error.message, error.field))
    }
}

/// Above this many bytes of payload the work outlasts the cost of releasing and taking back
/// the interpreter.
const DETACH_PAYLOAD_LEN: usize = 8 * 1024;

#[pyclass(frozen, name = "Leaf", module = "recordseal._native")]
struct PyLeaf {
    record: Arc<CommittedRecord>,
    index: usize,
}

#[pymethods]
impl PyLeaf {
    #[getter]
    fn path(&self) -> &str {
        self.record.leaf(self.index).path
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.record.leaf(self.index).kind.name()
    }

    #[getter]
    fn encoded<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.record.leaf(self.index).encoded)
    }

    #[getter]
    fn salt<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.record.leaf(self.index).salt)
    }

    #[getter]
    fn commitment<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.record.leaf(self.index).commitment)
    }
}

#[pyclass(frozen, name = "CommittedRecord", module = "recordseal._native")]
struct PyCommittedRecord {
    record: Arc<CommittedRecord>,
}

#[pymethods]
impl PyCommittedRecord {
    #[getter]
    fn canonical<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.record.canonical)
    }

    #[getter]
    fn leaves<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let leaves = (0..self.record.field_count()).map(|index| PyLeaf {
            record: Arc::clone(&self.record),
            index,
        });
        PyList::new(py, leaves)
    }

    #[getter]
    fn root<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.record.root)
    }

    #[getter]
    fn field_count(&self) -> usize {
        self.record.field_count()
    }
}

#[pyfunction]
fn canonicalize<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let canonical = if data.len() > DETACH_PAYLOAD_LEN {
        py.detach(|| jcs::canonicalize(data))
    } else {
        jcs::canonicalize(data)
    }?;
    Ok(PyBytes::new(py, &canonical))
}

#[pyfunction]
fn encode_value<'py>(
    py: Python<'py>,
    kind: &Bound<'py, PyAny>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let kind = Kind::from_name(kind_name(kind))?;
    let mut encoded = Vec::new();
    kinds::encode(kind, value_of(value)?, &mut encoded)?;
    Ok(PyBytes::new(py, &encoded))
}

#[pyfunction]
fn validate_declarations(declarations: &Bound<'_, PyAny>) -> PyResult<()> {
    let items = declaration_items(declarations)?;
    Declarations::new(&declaration_strs(&items)?)?;
    Ok(())
}

#[pyfunction]
fn derive_salt<'py>(
    py: Python<'py>,
    salt_key: &[u8],
    record_id: &Bound<'py, PyString>,
    path: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let record_id = record_id_str(salt_key, record_id)?;
    Ok(PyBytes::new(
        py,
        &commitment::derive_salt(salt_key, record_id, path)?,
    ))
}

#[pyfunction]
fn commit_field<'py>(
    py: Python<'py>,
    path: &str,
    salt: &[u8],
    encoded: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(
        py,
        &commitment::commit_field(path, salt, encoded),
    ))
}

#[pyfunction]
fn commit_record(
    py: Python<'_>,
    payload: &[u8],
    declarations: Option<&Bound<'_, PyAny>>,
    strict: bool,
    salt_key: &[u8],
    record_id: &Bound<'_, PyString>,
) -> PyResult<PyCommittedRecord> {
    // Checked here too, so that no later argument is read before the size is refused.
    leaves::check_payload_len(payload.len())?;
    let stream = match declarations {
        Some(declarations) => stream_declarations(declarations)?,
        None => None,
    };
    let none;
    let declarations = match &stream {
        Some(declarations) => &**declarations,
        None => {
            none = Declarations::empty();
            &none
        }
    };
    let record_id = record_id_str(salt_key, record_id)?;
    let commit = || leaves::commit_declared(payload, declarations, strict, salt_key, record_id);
    let record = if payload.len() > DETACH_PAYLOAD_LEN {
        py.detach(commit)
    } else {
        commit()
    }?;
    Ok(PyCommittedRecord {
        record: Arc::new(record),
    })
}

#[pyfunction]
fn leaf_hash<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &merkle::leaf_hash(data))
}

#[pyfunction]
fn merkle_root<'py>(py: Python<'py>, leaves: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let items = byte_items(leaves)?;
    let data = slices(&items);
    let root = detach_if(py, data.len(), || merkle::root(&data));
    Ok(PyBytes::new(py, &root))
}

#[pyfunction]
fn inclusion_proof<'py>(
    py: Python<'py>,
    leaves: &Bound<'py, PyAny>,
    index: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let items = byte_items(leaves)?;
    let data = slices(&items);
    // Beyond u64 is beyond any sequence: out of range like a negative index.
    let index = match int_arg(index)? {
        Int::Fits(index) => index,
        Int::Negative | Int::Huge => u64::MAX,
    };
    let proof = detach_if(py, data.len(), || merkle::inclusion_proof(&data, index))?;
    hash_list(py, &proof)
}

#[pyfunction]
fn consistency_proof<'py>(
    py: Python<'py>,
    leaves: &Bound<'py, PyAny>,
    old_size: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let items = byte_items(leaves)?;
    let data = slices(&items);
    let old_size = match int_arg(old_size)? {
        Int::Fits(size) => size,
        Int::Negative | Int::Huge => u64::MAX,
    };
    let proof = detach_if(py, data.len(), || {
        merkle::consistency_proof(&data, old_size)
    })?;
    hash_list(py, &proof)
}

#[pyfunction]
fn verify_inclusion(
    leaf: &[u8],
    index: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    proof: &Bound<'_, PyAny>,
    root: &[u8],
) -> PyResult<()> {
    let items = byte_items(proof)?;
    // In the order of spec section 5: a negative index, a negative size, then index >= size
    // (for a size beyond u64 too, which leaves nothing else to check).
    let (index, size) = match (int_arg(index)?, int_arg(size)?) {
        (Int::Negative, _) => (1, 0),
        (_, Int::Negative) => {
            return Err(Error::new(Code::SizeInvalid, "the tree size must not be negative").into())
        }
        (Int::Fits(index), Int::Fits(size)) => (index, size),
        (Int::Huge, Int::Fits(_)) => (1, 0),
        (Int::Huge, Int::Huge) if index.ge(size)? => (1, 0),
        (_, Int::Huge) => return Err(beyond_u64()),
    };
    merkle::verify_inclusion(leaf, index, size, &slices(&items), root)?;
    Ok(())
}

#[pyfunction]
fn verify_consistency(
    old_size: &Bound<'_, PyAny>,
    new_size: &Bound<'_, PyAny>,
    old_root: &[u8],
    new_root: &[u8],
    proof: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let items = byte_items(proof)?;
    let proof = slices(&items);
    let (old, new) = match (int_arg(old_size)?, int_arg(new_size)?) {
        (Int::Fits(old), Int::Fits(new)) => (old, new),
        (Int::Negative, _) | (_, Int::Negative) | (Int::Huge, Int::Fits(_)) => (1, 0),
        (Int::Huge, Int::Huge) if old_size.gt(new_size)? => (1, 0),
        // The checks that need no arithmetic on the sizes, in the spec's order.
        (Int::Fits(0), Int::Huge) => (0, 1),
        (Int::Huge, Int::Huge) if old_size.eq(new_size)? => (1, 1),
        _ => return Err(beyond_u64()),
    };
    merkle::verify_consistency(old, new, old_root, new_root, &proof)?;
    Ok(())
}

#[pymodule]
#[pyo3(name = "_native")]
fn native_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let (major, minor, update) = unicode_normalization::UNICODE_VERSION;
    module.add("UNICODE_VERSION", format!("{major}.{minor}.{update}"))?;
    let kinds = PyTuple::new(module.py(), kinds::ALL.iter().map(|kind| kind.name()))?;
    module.add("KINDS", kinds)?;
    // What `recordseal bench` reports of the build: optimised or not.
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    module.add("BUILD_PROFILE", profile)?;
    module.add_class::<PyLeaf>()?;
    module.add_class::<PyCommittedRecord>()?;
    module.add_class::<signing::PyEd25519Signer>()?;
    module.add_class::<ingest::PyPreparedRecord>()?;
    module.add_class::<request::PyRecordRead>()?;
    module.add_class::<hsm::PyModuleToken>()?;
    module.add_class::<hsm::PyModuleKey>()?;
    module.add_function(wrap_pyfunction!(canonicalize, module)?)?;
    module.add_function(wrap_pyfunction!(encode_value, module)?)?;
    module.add_function(wrap_pyfunction!(validate_declarations, module)?)?;
    module.add_function(wrap_pyfunction!(derive_salt, module)?)?;
    module.add_function(wrap_pyfunction!(commit_field, module)?)?;
    module.add_function(wrap_pyfunction!(commit_record, module)?)?;
    module.add_function(wrap_pyfunction!(ingest::prepare_records, module)?)?;
    module.add_function(wrap_pyfunction!(request::read_request, module)?)?;
    module.add_function(wrap_pyfunction!(answer::encode_answers, module)?)?;
    module.add_function(wrap_pyfunction!(leaf_hash, module)?)?;
    module.add_function(wrap_pyfunction!(merkle_root, module)?)?;
    module.add_function(wrap_pyfunction!(inclusion_proof, module)?)?;
    module.add_function(wrap_pyfunction!(verify_inclusion, module)?)?;
    module.add_function(wrap_pyfunction!(consistency_proof, module)?)?;
    module.add_function(wrap_pyfunction!(verify_consistency, module)?)?;
    module.add_function(wrap_pyfunction!(subject_keys::derive_subject_keys, module)?)?;
    module.add_function(wrap_pyfunction!(log::grow_log, module)?)?;
    module.add_function(wrap_pyfunction!(placing::place_appends, module)?)?;
    // `add` records every name in `__all__`; the stub (checked by stubtest) declares none for
    // this private module.
    module.delattr("__all__")?;
    Ok(())
}
