//! `place_appends`: the placement rules (`crate::placing`) over the `Call`s and `Append`s of
//! `recordseal.storage.requests`, for `recordseal.storage.native_placing`.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::placing::{self, Decision};

/// An append's fields, read from its `Append` tuple.
struct Read {
    stream: i64,
    subject_index: Vec<u8>,
    subject_ref: String,
    key: Option<(String, Vec<u8>)>,
    record_id: String,
}

fn read_append(append: &Bound<'_, PyAny>) -> PyResult<Read> {
    let fields = append.cast::<PyTuple>()?;
    let subject = fields.get_item(1)?;
    let claim = fields.get_item(4)?;
    let key = if claim.is_none() {
        None
    } else {
        Some((claim.get_item(0)?.extract()?, claim.get_item(1)?.extract()?))
    };
    Ok(Read {
        stream: fields.get_item(0)?.extract()?,
        subject_index: subject.getattr("index")?.extract()?,
        subject_ref: subject.getattr("subject_ref")?.extract()?,
        key,
        record_id: fields.get_item(2)?.extract()?,
    })
}

/// Decide the appends of ``calls`` (``Call`` tuples) by the rules of
/// ``storage/placing.py``, given the stored idempotency keys (``(tenant, key) -> (hash,
/// record id)``) and subjects (``(tenant, index) -> (handle, live)``), read for the keys and
/// subjects the calls name, and ``check(stream, call, append)``, rule 4's check of a stream,
/// asked once per stream where the reference asks it. ``(decisions, slots, streams, keys)``:
/// per append its index among the placed or ``(refusal, value)``, each placed append's slot,
/// the slots' streams and the placed keys as ``(tenant, key, hash, record id)``.
#[pyfunction]
pub(super) fn place_appends<'py>(
    py: Python<'py>,
    calls: &Bound<'py, PyList>,
    keys: &Bound<'py, PyDict>,
    subjects: &Bound<'py, PyDict>,
    check: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut tenants: Vec<String> = Vec::with_capacity(calls.len());
    let mut appends: Vec<Vec<Read>> = Vec::with_capacity(calls.len());
    for call in calls.iter() {
        let call = call.cast_into::<PyTuple>()?;
        tenants.push(call.get_item(0)?.extract()?);
        let items = call.get_item(1)?;
        appends.push(
            items
                .try_iter()?
                .map(|append| read_append(&append?))
                .collect::<PyResult<_>>()?,
        );
    }
    // Only the stored keys and subjects the appends name, each read once.
    let mut stored_keys: HashMap<(String, String), (Vec<u8>, String)> = HashMap::new();
    let mut stored_subjects: HashMap<(String, Vec<u8>), (String, bool)> = HashMap::new();
    for (tenant, reads) in tenants.iter().zip(&appends) {
        for read in reads {
            if let Some((key, _)) = &read.key {
                if let Entry::Vacant(entry) = stored_keys.entry((tenant.clone(), key.clone())) {
                    if let Some(value) = keys.get_item((tenant, key))? {
                        entry.insert(value.extract()?);
                    }
                }
            }
            let id = (tenant.clone(), read.subject_index.clone());
            if let Entry::Vacant(entry) = stored_subjects.entry(id) {
                let probe = (tenant, PyBytes::new(py, &read.subject_index));
                if let Some(value) = subjects.get_item(probe)? {
                    entry.insert(value.extract()?);
                }
            }
        }
    }
    let lookups = placing::Lookups {
        keys: stored_keys
            .iter()
            .map(|((tenant, key), (hash, id))| {
                (
                    (tenant.as_str(), key.as_str()),
                    (hash.as_slice(), id.as_str()),
                )
            })
            .collect(),
        subjects: stored_subjects
            .iter()
            .map(|((tenant, index), (handle, live))| {
                (
                    (tenant.as_str(), index.as_slice()),
                    (handle.as_str(), *live),
                )
            })
            .collect(),
    };
    let borrowed: Vec<placing::Call> = tenants
        .iter()
        .zip(&appends)
        .map(|(tenant, reads)| placing::Call {
            tenant,
            appends: reads
                .iter()
                .map(|read| placing::Append {
                    stream: read.stream,
                    subject_index: &read.subject_index,
                    subject_ref: &read.subject_ref,
                    key: read.key.as_ref().map(|(k, h)| (k.as_str(), h.as_slice())),
                    record_id: &read.record_id,
                })
                .collect(),
        })
        .collect();

    let decided = placing::place(&borrowed, &lookups, |stream, call, append| {
        check.call1((stream, call, append))?.extract::<bool>()
    })?;
    let decisions = PyList::empty(py);
    for decision in &decided.decisions {
        let item = match decision {
            Decision::Placed(index) => index.into_pyobject(py)?.into_any(),
            Decision::Deferred => ("deferred", py.None()).into_pyobject(py)?.into_any(),
            Decision::Replayed(id) => ("replayed", id).into_pyobject(py)?.into_any(),
            Decision::KeyReused(key) => ("key_reused", key).into_pyobject(py)?.into_any(),
            Decision::SubjectRace(handle) => ("subject_race", handle).into_pyobject(py)?.into_any(),
            Decision::SubjectErased(handle) => {
                ("subject_erased", handle).into_pyobject(py)?.into_any()
            }
            Decision::Fenced(stream) => ("fenced", stream).into_pyobject(py)?.into_any(),
        };
        decisions.append(item)?;
    }
    let placed_keys = PyList::empty(py);
    for (tenant, key, hash, id) in &decided.keys {
        placed_keys.append((tenant, key, PyBytes::new(py, hash), id))?;
    }
    PyTuple::new(
        py,
        [
            decisions.into_any(),
            PyList::new(py, &decided.slots)?.into_any(),
            PyList::new(py, &decided.streams)?.into_any(),
            placed_keys.into_any(),
        ],
    )
}
