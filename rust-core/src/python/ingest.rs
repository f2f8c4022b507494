//! The ingest pipeline's two batch calls (src/ingest.rs): `prepare_records` and the
//! `sign_headers` method of `Ed25519Signer`. Every argument is read first; the batch's work
//! then runs with the interpreter detached, on every core.
//!
//! `prepare_records` takes each record as a `RecordInput` (its payload as JSON text) or as a
//! `ReadInput` (a `RecordRead` of `read_request`: its payload parsed already, its envelope in
//! it, its record id made here).

use std::sync::Arc;

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::args::stream_declarations;
use super::request::PyRecordRead;
use super::CommitError;
use crate::commitment::{check_salt_key, Hash};
use crate::declarations::Declarations;
use crate::error::{Code, Error};
use crate::ingest::{self, Head, HeaderFields, HeaderKey, Input, Payload, PlaceError, Prepared};
use crate::leaves;
use crate::record_id::new_record_ids;

/// An accepted record of `prepare_records`: its commitment and sealed payload, and the
/// header members it was prepared with.
#[pyclass(frozen, name = "PreparedRecord", module = "recordseal._native")]
pub struct PyPreparedRecord {
    prepared: Prepared,
}

#[pymethods]
impl PyPreparedRecord {
    #[getter]
    fn record_id(&self) -> &str {
        &self.prepared.fields.record_id
    }

    #[getter]
    fn root<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.prepared.fields.root)
    }

    #[getter]
    fn field_count(&self) -> usize {
        self.prepared.fields.field_count
    }

    #[getter]
    fn sealed_payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.prepared.sealed_payload)
    }

    fn __repr__(&self) -> String {
        format!(
            "PreparedRecord(record_id={:?}, field_count={})",
            self.prepared.fields.record_id, self.prepared.fields.field_count
        )
    }
}

/// The members of a `RecordInput` tuple, in order.
const INPUT_LEN: usize = 11;
/// The members of a `ReadInput` tuple: `(read, tenant, subject_ref, declarations, strict,
/// salt_key, payload_key)`.
const READ_INPUT_LEN: usize = 7;

/// The declarations of a batch's streams by the identity of their mapping: a stream's
/// records share one mapping, and comparing pointers costs nothing.
struct StreamCache {
    none: Declarations<'static>,
    seen: Vec<(usize, Option<Arc<Declarations<'static>>>)>,
}

impl StreamCache {
    fn get(&mut self, declarations: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        if declarations.is_none() {
            return Ok(None);
        }
        let id = declarations.as_ptr() as usize;
        if let Some(index) = self.seen.iter().position(|(seen, _)| *seen == id) {
            return Ok(Some(index));
        }
        self.seen.push((id, stream_declarations(declarations)?));
        Ok(Some(self.seen.len() - 1))
    }

    fn declarations(&self, index: Option<usize>) -> &Declarations<'static> {
        index
            .and_then(|index| self.seen[index].1.as_deref())
            .unwrap_or(&self.none)
    }
}

/// A refusal of the commitment goes in the item's place; any other error is raised.
fn in_place<T>(result: PyResult<T>, py: Python<'_>) -> PyResult<Result<T, PyErr>> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(error) if error.is_instance_of::<CommitError>(py) => Ok(Err(error)),
        Err(error) => Err(error),
    }
}

/// The record id as UTF-8; one without a UTF-8 form is refused after the salt key, as
/// `commit_record` does.
fn record_id_of<'a>(item: Borrowed<'a, '_, PyAny>, salt_key: &[u8]) -> PyResult<&'a str> {
    match item.extract::<&str>() {
        Ok(record_id) => Ok(record_id),
        Err(_) if item.cast::<pyo3::types::PyString>().is_ok() => {
            check_salt_key(salt_key)?;
            Err(Error::new(Code::RecordIdInvalid, "the record id has no UTF-8 form").into())
        }
        Err(error) => Err(error),
    }
}

/// A record's borrowed arguments, with its declarations as an index into the cache.
struct Args<'a> {
    texts: [&'a str; 5],
    record_id: &'a str,
    payload: Payload<'a>,
    declarations: Option<usize>,
    strict: bool,
    salt_key: &'a [u8],
    payload_key: &'a [u8; 32],
}

/// Reads one `RecordInput` or `ReadInput`, in the order of checks of `commit_record`: the
/// payload's size, the declarations, the record id (`record_id`: the one made for a
/// `ReadInput`).
fn read<'a>(
    py: Python<'_>,
    tuple: &'a Bound<'_, PyTuple>,
    record_id: Option<&'a str>,
    cache: &mut StreamCache,
) -> PyResult<Result<Args<'a>, PyErr>> {
    if let Some(record_id) = record_id {
        return read_input(py, tuple, record_id, cache);
    }
    if tuple.len() != INPUT_LEN {
        return Err(PyValueError::new_err(format!(
            "a RecordInput has {INPUT_LEN} members and a ReadInput {READ_INPUT_LEN}, not {}",
            tuple.len()
        )));
    }
    let text = |index| tuple.get_borrowed_item(index)?.extract::<&str>();
    let texts = [text(0)?, text(1)?, text(2)?, text(3)?, text(4)?];
    let payload = tuple.get_borrowed_item(6)?.extract::<&[u8]>()?;
    let strict = tuple.get_borrowed_item(8)?.extract::<bool>()?;
    let salt_key = tuple.get_borrowed_item(9)?.extract::<&[u8]>()?;
    let payload_key = payload_key_of(tuple, 10)?;
    if let Err(error) = leaves::check_payload_len(payload.len()) {
        return Ok(Err(error.into()));
    }
    let declarations = match in_place(cache.get(&tuple.get_item(7)?), py)? {
        Ok(declarations) => declarations,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let record_id = match in_place(record_id_of(tuple.get_borrowed_item(5)?, salt_key), py)? {
        Ok(record_id) => record_id,
        Err(refusal) => return Ok(Err(refusal)),
    };
    Ok(Ok(Args {
        texts,
        record_id,
        payload: Payload::Text(payload),
        declarations,
        strict,
        salt_key,
        payload_key,
    }))
}

fn payload_key_of<'a>(tuple: &'a Bound<'_, PyTuple>, index: usize) -> PyResult<&'a [u8; 32]> {
    tuple
        .get_borrowed_item(index)?
        .extract::<&[u8]>()?
        .try_into()
        .map_err(|_| PyValueError::new_err("a payload key is 32 bytes"))
}

/// Reads one `ReadInput`: its record's envelope and payload come from the read.
fn read_input<'a>(
    py: Python<'_>,
    tuple: &'a Bound<'_, PyTuple>,
    record_id: &'a str,
    cache: &mut StreamCache,
) -> PyResult<Result<Args<'a>, PyErr>> {
    let record = tuple
        .get_borrowed_item(0)?
        .cast::<PyRecordRead>()?
        .get()
        .get();
    let tenant = tuple.get_borrowed_item(1)?.extract::<&str>()?;
    let subject_ref = tuple.get_borrowed_item(2)?.extract::<&str>()?;
    let strict = tuple.get_borrowed_item(4)?.extract::<bool>()?;
    let salt_key = tuple.get_borrowed_item(5)?.extract::<&[u8]>()?;
    let payload_key = payload_key_of(tuple, 6)?;
    if let Some(Err(error)) = record.payload_len.map(leaves::check_payload_len) {
        return Ok(Err(error.into()));
    }
    let declarations = match in_place(cache.get(&tuple.get_item(3)?), py)? {
        Ok(declarations) => declarations,
        Err(refusal) => return Ok(Err(refusal)),
    };
    Ok(Ok(Args {
        texts: [
            tenant,
            &record.stream,
            &record.record_type,
            &record.occurred_at,
            subject_ref,
        ],
        record_id,
        payload: Payload::Tree(&record.payload, record.payload_len),
        declarations,
        strict,
        salt_key,
        payload_key,
    }))
}

/// Commits and seals a batch of `RecordInput` or `ReadInput` tuples: a `PreparedRecord` or
/// the `CommitError` of each, in order.
#[pyfunction]
pub fn prepare_records<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let tuples: Vec<Bound<'py, PyTuple>> = items
        .try_iter()?
        .map(|item| Ok(item?.cast_into::<PyTuple>()?))
        .collect::<PyResult<_>>()?;
    let mut cache = StreamCache {
        none: Declarations::empty(),
        seen: Vec::new(),
    };
    // A record id for each `ReadInput`, made together.
    let reads = tuples.iter().filter(|t| t.len() == READ_INPUT_LEN).count();
    let mut made = new_record_ids(reads).into_iter();
    let ids: Vec<Option<String>> = tuples
        .iter()
        .map(|tuple| (tuple.len() == READ_INPUT_LEN).then(|| made.next().unwrap_or_default()))
        .collect();
    let read: Vec<Result<Args<'_>, PyErr>> = tuples
        .iter()
        .zip(&ids)
        .map(|(tuple, id)| read(py, tuple, id.as_deref(), &mut cache))
        .collect::<PyResult<_>>()?;
    // The refusal of each item (None when it is ready), and the ready items' inputs.
    let mut refusals = Vec::with_capacity(read.len());
    let mut inputs = Vec::with_capacity(read.len());
    for args in read {
        match args {
            Ok(args) => {
                let [tenant, stream, record_type, occurred_at, subject_ref] = args.texts;
                inputs.push(Input {
                    tenant,
                    stream,
                    record_type,
                    occurred_at,
                    subject_ref,
                    record_id: args.record_id,
                    payload: args.payload,
                    declarations: cache.declarations(args.declarations),
                    strict: args.strict,
                    salt_key: args.salt_key,
                    payload_key: args.payload_key,
                });
                refusals.push(None);
            }
            Err(refusal) => refusals.push(Some(refusal)),
        }
    }
    let mut prepared = py.detach(|| ingest::prepare_batch(&inputs)).into_iter();
    let results = PyList::empty(py);
    for refusal in refusals {
        let error = match refusal {
            Some(refusal) => refusal,
            None => match prepared.next() {
                Some(Ok(prepared)) => {
                    results.append(Py::new(py, PyPreparedRecord { prepared })?)?;
                    continue;
                }
                Some(Err(error)) => error.into(),
                None => unreachable!("one result for each ready record"),
            },
        };
        results.append(error.into_value(py))?;
    }
    Ok(results)
}

fn place_error(error: PlaceError) -> PyErr {
    match error {
        PlaceError::SequenceExhausted { .. } => PyOverflowError::new_err(error.to_string()),
        PlaceError::Key { .. } => super::hsm::KeyModuleError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// The heads of `sign_headers`: `(next_seq, prev chain leaf)` tuples.
fn read_heads(heads: &Bound<'_, PyList>) -> PyResult<Vec<Head>> {
    heads
        .iter()
        .map(|head| {
            let (next_seq, prev) = head.extract::<(u64, Bound<'_, PyBytes>)>()?;
            let prev: Hash = prev
                .as_bytes()
                .try_into()
                .map_err(|_| PyValueError::new_err("a head's prev is a 32-byte chain leaf"))?;
            Ok(Head { next_seq, prev })
        })
        .collect()
}

/// `Ed25519Signer.sign_headers`: places, signs and chains prepared records (see
/// `ingest::sign_batch`), updates `heads` in place, and gives
/// `(seq, header, signature, chain_leaf)` of each record.
pub fn sign_headers<'py, K: HeaderKey + ?Sized>(
    py: Python<'py>,
    key: &K,
    key_id: &str,
    ingested_at: &str,
    records: &Bound<'py, PyAny>,
    slots: &Bound<'py, PyAny>,
    heads: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyList>> {
    let records: Vec<Bound<'py, PyPreparedRecord>> = records
        .try_iter()?
        .map(|record| Ok(record?.cast_into::<PyPreparedRecord>()?))
        .collect::<PyResult<_>>()?;
    let fields: Vec<&HeaderFields> = records
        .iter()
        .map(|record| &record.get().prepared.fields)
        .collect();
    let slots: Vec<usize> = slots
        .try_iter()?
        .map(|slot| slot?.extract::<usize>())
        .collect::<PyResult<_>>()?;
    let before = read_heads(heads)?;
    let mut after = before.clone();
    let signed = py
        .detach(|| ingest::sign_batch(key, key_id, ingested_at, &fields, &slots, &mut after))
        .map_err(place_error)?;
    for (index, (old, new)) in before.iter().zip(&after).enumerate() {
        if old != new {
            heads.set_item(index, (new.next_seq, PyBytes::new(py, &new.prev)))?;
        }
    }
    PyList::new(
        py,
        signed.iter().map(|signed| {
            (
                signed.seq,
                PyBytes::new(py, &signed.header),
                PyBytes::new(py, &signed.signature),
                PyBytes::new(py, &signed.chain_leaf),
            )
        }),
    )
}
