//! `encode_answers` (src/answer.rs): the JSON answer of an ingest route from the results of
//! its records.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::answer::{self, Answer};

/// The answer of `POST /v1/records:batch` (``batch``), or of `POST /v1/records` (one stored
/// record), from each record's result: ``(header, signature, chain_leaf, replayed)`` of a
/// stored record, ``(status, problem)`` of a refused one (its problem as JSON text).
#[pyfunction]
pub fn encode_answers<'py>(
    py: Python<'py>,
    results: &Bound<'py, PyAny>,
    batch: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let tuples: Vec<Bound<'py, PyTuple>> = results
        .try_iter()?
        .map(|item| Ok(item?.cast_into::<PyTuple>()?))
        .collect::<PyResult<_>>()?;
    let answers: Vec<Answer<'_>> = tuples.iter().map(answer_of).collect::<PyResult<_>>()?;
    let invalid = |error: answer::HeaderWithout| PyValueError::new_err(error.to_string());
    if batch {
        return Ok(PyBytes::new(py, &answer::batch(&answers).map_err(invalid)?));
    }
    match answers.as_slice() {
        [Answer::Record {
            header,
            signature,
            chain_leaf,
            replayed,
        }] => {
            let mut out = Vec::with_capacity(header.len() + 400);
            answer::write_record(&mut out, header, signature, chain_leaf, *replayed)
                .map_err(invalid)?;
            Ok(PyBytes::new(py, &out))
        }
        _ => Err(PyValueError::new_err(
            "the answer of a single post is one stored record",
        )),
    }
}

fn answer_of<'a>(tuple: &'a Bound<'_, PyTuple>) -> PyResult<Answer<'a>> {
    let bytes =
        |index| -> PyResult<&[u8]> { Ok(tuple.get_borrowed_item(index)?.extract::<&[u8]>()?) };
    match tuple.len() {
        4 => Ok(Answer::Record {
            header: bytes(0)?,
            signature: bytes(1)?,
            chain_leaf: bytes(2)?,
            replayed: tuple.get_borrowed_item(3)?.extract::<bool>()?,
        }),
        2 => Ok(Answer::Problem {
            status: tuple.get_borrowed_item(0)?.extract::<u16>()?,
            problem: bytes(1)?,
        }),
        len => Err(PyValueError::new_err(format!(
            "a result is (header, signature, chain_leaf, replayed) or (status, problem), not {len} members"
        ))),
    }
}
