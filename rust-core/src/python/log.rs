//! `grow_log`: appending leaf hashes to a log kept as complete-subtree nodes (`crate::log`),
//! the fast path of `recordseal.merkle.log.grow`, whose fallback is `merkle.log.grow_log`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use super::args::{byte_items, detach_if};
use crate::log;
use crate::sha256::Hash;

/// Appends ``leaf_hashes`` to a log of ``size`` leaves; ``stored`` holds at least its frontier
/// nodes (a missing one raises KeyError). ``(nodes, root)``: every completed node by
/// ``(level, index)``, in the order they complete, and the root of the grown log.
#[pyfunction]
pub(super) fn grow_log<'py>(
    py: Python<'py>,
    size: u64,
    leaf_hashes: &Bound<'py, PyAny>,
    stored: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyBytes>)> {
    let items = byte_items(leaf_hashes)?;
    let leaves = items
        .iter()
        .enumerate()
        .map(|(i, item)| hash_of(item, || format!("leaf hash {i}")))
        .collect::<PyResult<Vec<Hash>>>()?;
    if size.checked_add(leaves.len() as u64).is_none() {
        return Err(PyValueError::new_err("a log holds at most 2^64 - 1 leaves"));
    }
    let frontier = log::frontier(size)
        .map(|(level, index)| {
            let node = stored.get_item((level, index))?.cast_into::<PyBytes>()?;
            hash_of(&node, || format!("stored node ({level}, {index})"))
        })
        .collect::<PyResult<Vec<Hash>>>()?;
    let growth = detach_if(py, leaves.len(), || log::grow(size, frontier, &leaves));
    let nodes = PyDict::new(py);
    for node in &growth.nodes {
        let id = PyTuple::new(py, [node.level as u64, node.index])?;
        nodes.set_item(id, PyBytes::new(py, &node.hash))?;
    }
    Ok((nodes, PyBytes::new(py, &growth.root)))
}

fn hash_of(bytes: &Bound<'_, PyBytes>, what: impl FnOnce() -> String) -> PyResult<Hash> {
    let bytes = bytes.as_bytes();
    bytes
        .try_into()
        .map_err(|_| PyValueError::new_err(format!("{} is {} bytes, not 32", what(), bytes.len())))
}
