//! Python arguments to core values: the checks and conversions the stub's types leave open.

use std::cell::RefCell;
use std::sync::Arc;

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::CommitError;
use crate::commitment::check_salt_key;
use crate::declarations::{self, Declarations};
use crate::error::{Code, Error};
use crate::kinds::Value;

/// A Python value as `encode` sees it; `bool` is tested before `int`, its base class.
pub(super) fn value_of<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Value<'a>> {
    if value.is_none() {
        Ok(Value::Null)
    } else if let Ok(flag) = value.cast::<PyBool>() {
        Ok(Value::Bool(flag.is_true()))
    } else if value.is_instance_of::<PyInt>() {
        // Python's int-to-float rounds half to even, as the JSON reading does.
        match value.extract::<f64>() {
            Ok(number) => Ok(Value::Num(number)),
            Err(error) if error.is_instance_of::<PyOverflowError>(value.py()) => Err(Error::new(
                Code::NumberOutOfRange,
                "the integer is too large for an IEEE-754 double",
            )
            .into()),
            Err(error) => Err(error),
        }
    } else if let Ok(number) = value.cast::<PyFloat>() {
        Ok(Value::Num(number.value()))
    } else if let Ok(text) = value.cast::<PyString>() {
        Ok(text.to_str().map_or(Value::UnencodableStr, Value::Str))
    } else if let Ok(dict) = value.cast::<PyDict>() {
        Ok(if dict.is_empty() {
            Value::EmptyObject
        } else {
            Value::NonEmptyContainer
        })
    } else if let Ok(list) = value.cast::<PyList>() {
        Ok(if list.is_empty() {
            Value::EmptyArray
        } else {
            Value::NonEmptyContainer
        })
    } else {
        Ok(Value::Other)
    }
}

/// A declaration as given: the pattern (a `str`) and whatever the kind is.
type Item<'py> = (Bound<'py, PyString>, Bound<'py, PyAny>);

/// The `(pattern, kind)` items of a mapping, still as Python objects.
pub(super) fn declaration_items<'py>(declarations: &Bound<'py, PyAny>) -> PyResult<Vec<Item<'py>>> {
    if let Ok(dict) = declarations.cast::<PyDict>() {
        let mut items = Vec::with_capacity(dict.len());
        for (pattern, kind) in dict.iter() {
            items.push((pattern.cast_into::<PyString>()?, kind));
        }
        return Ok(items);
    }
    declarations
        .call_method0("items")?
        .try_iter()?
        .map(|item| item?.extract::<Item<'py>>())
        .collect()
}

/// A kind name as UTF-8; anything else names no kind.
pub(super) fn kind_name<'a>(kind: &'a Bound<'_, PyAny>) -> &'a str {
    kind.cast::<PyString>()
        .ok()
        .and_then(|kind| kind.to_str().ok())
        .unwrap_or("")
}

/// The items borrowed as UTF-8. A pattern without a UTF-8 form (a lone surrogate) is
/// refused, but only if it comes first among the faulty patterns: see `first_fault`.
pub(super) fn declaration_strs<'a>(items: &'a [Item<'_>]) -> PyResult<Vec<(&'a str, &'a str)>> {
    let mut pairs = Vec::with_capacity(items.len());
    for (pattern, kind) in items {
        match pattern.to_str() {
            Ok(pattern) => pairs.push((pattern, kind_name(kind))),
            Err(_) => return Err(first_fault(items)),
        }
    }
    Ok(pairs)
}

/// The fault of the first faulty pattern in UTF-8 order when some pattern has no UTF-8 form.
/// Such a pattern sorts by its bytes with surrogates encoded anyway ("surrogatepass"), and
/// is refused with the pattern itself, a Python string, as `field`.
fn first_fault(items: &[Item<'_>]) -> PyErr {
    let mut first: Option<(Vec<u8>, PyErr)> = None;
    for (pattern, kind) in items {
        let fault: PyErr = match pattern.to_str() {
            Ok(text) => match declarations::check(text, kind_name(kind)) {
                Ok(()) => continue,
                Err(error) => error.into(),
            },
            Err(_) => CommitError::new_err((
                Code::DeclarationInvalid.as_str(),
                "a pattern holds a lone surrogate, which has no UTF-8 form",
                pattern.clone().unbind(),
            )),
        };
        let order = pattern
            .call_method1("encode", ("utf-8", "surrogatepass"))
            .and_then(|bytes| bytes.extract::<Vec<u8>>());
        let order = match order {
            Ok(order) => order,
            Err(error) => return error,
        };
        if first.as_ref().is_none_or(|(best, _)| order < *best) {
            first = Some((order, fault));
        }
    }
    first.map_or_else(
        || PyValueError::new_err("no faulty declaration"),
        |(_, fault)| fault,
    )
}

/// The record id as UTF-8; one without a UTF-8 form is refused after the salt key is checked.
pub(super) fn record_id_str<'a>(
    salt_key: &[u8],
    record_id: &'a Bound<'_, PyString>,
) -> PyResult<&'a str> {
    match record_id.to_str() {
        Ok(text) => Ok(text),
        Err(_) => {
            check_salt_key(salt_key)?;
            Err(Error::new(Code::RecordIdInvalid, "the record id has no UTF-8 form").into())
        }
    }
}

/// The declarations of the last record committed on this thread, compared by content: a
/// stream sends the same declarations with every record, and building them costs about as
/// much as hashing a field.
struct LastDeclarations {
    pairs: Vec<(String, String)>,
    declarations: Arc<Declarations<'static>>,
}

thread_local! {
    static LAST_DECLARATIONS: RefCell<Option<LastDeclarations>> = const { RefCell::new(None) };
}

/// Checked declarations of a mapping, `None` when it is empty.
pub(super) fn stream_declarations(
    declarations: &Bound<'_, PyAny>,
) -> PyResult<Option<Arc<Declarations<'static>>>> {
    if let Ok(dict) = declarations.cast::<PyDict>() {
        if dict.is_empty() {
            return Ok(None);
        }
        // The common case, tested without collecting the items first.
        let hit = LAST_DECLARATIONS.with_borrow(|last| {
            let last = last.as_ref()?;
            same_items(dict, &last.pairs).then(|| Arc::clone(&last.declarations))
        });
        if hit.is_some() {
            return Ok(hit);
        }
    }
    let items = declaration_items(declarations)?;
    let pairs = declaration_strs(&items)?;
    if pairs.is_empty() {
        return Ok(None);
    }
    Ok(Some(declarations_for(&pairs)?))
}

fn same_items(dict: &Bound<'_, PyDict>, pairs: &[(String, String)]) -> bool {
    let same = |item: &Bound<'_, PyAny>, expected: &str| {
        item.cast::<PyString>()
            .is_ok_and(|text| text.to_str().is_ok_and(|text| text == expected))
    };
    dict.len() == pairs.len()
        && dict
            .iter()
            .zip(pairs)
            .all(|((pattern, kind), (p, k))| same(&pattern, p) && same(&kind, k))
}

fn declarations_for(pairs: &[(&str, &str)]) -> Result<Arc<Declarations<'static>>, Error> {
    LAST_DECLARATIONS.with_borrow_mut(|last| {
        let same = |last: &&LastDeclarations| {
            last.pairs.len() == pairs.len()
                && last
                    .pairs
                    .iter()
                    .zip(pairs)
                    .all(|((p, k), (q, l))| p == q && k == l)
        };
        if let Some(last) = last.as_ref().filter(same) {
            return Ok(Arc::clone(&last.declarations));
        }
        let declarations = Arc::new(Declarations::new(pairs)?.into_owned());
        let pairs = pairs.iter().map(|(p, k)| (p.to_string(), k.to_string()));
        *last = Some(LastDeclarations {
            pairs: pairs.collect(),
            declarations: Arc::clone(&declarations),
        });
        Ok(declarations)
    })
}

/// The items of a sequence of `bytes`, kept alive so their buffers can be borrowed.
pub(super) fn byte_items<'py>(sequence: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    if let Ok(list) = sequence.cast::<PyList>() {
        return list
            .iter()
            .map(|item| Ok(item.cast_into::<PyBytes>()?))
            .collect();
    }
    if let Ok(tuple) = sequence.cast::<PyTuple>() {
        return tuple
            .iter()
            .map(|item| Ok(item.cast_into::<PyBytes>()?))
            .collect();
    }
    sequence
        .try_iter()?
        .map(|item| Ok(item?.cast_into::<PyBytes>()?))
        .collect()
}

pub(super) fn slices<'a>(items: &'a [Bound<'_, PyBytes>]) -> Vec<&'a [u8]> {
    items.iter().map(|item| item.as_bytes()).collect()
}

pub(super) fn hash_list<'py>(py: Python<'py>, hashes: &[[u8; 32]]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, hashes.iter().map(|hash| PyBytes::new(py, hash)))
}

/// Above this many leaves a Merkle computation outlasts the cost of releasing and taking back
/// the interpreter.
const DETACH_LEAVES: usize = 256;

/// Runs `work` detached from the interpreter when the tree is large.
pub(super) fn detach_if<T: Send>(
    py: Python<'_>,
    leaves: usize,
    work: impl FnOnce() -> T + Send,
) -> T {
    if leaves > DETACH_LEAVES {
        py.detach(work)
    } else {
        work()
    }
}

/// A Python int of any size, as the merkle functions need to tell it apart.
pub(super) enum Int {
    Fits(u64),
    Negative,
    Huge,
}

pub(super) fn int_arg(value: &Bound<'_, PyAny>) -> PyResult<Int> {
    match value.extract::<u64>() {
        Ok(number) => Ok(Int::Fits(number)),
        Err(error) if error.is_instance_of::<PyOverflowError>(value.py()) => Ok(if value.lt(0)? {
            Int::Negative
        } else {
            Int::Huge
        }),
        Err(error) => Err(error),
    }
}

pub(super) fn beyond_u64() -> PyErr {
    Error::new(
        Code::ProofInvalid,
        "tree sizes are limited to 2^64 - 1 leaves",
    )
    .into()
}
