//! JSON text to a tree (docs/spec.md section 1.1), through serde_json.
//!
//! serde_json reads the grammar and reports its own faults through an opaque error; the faults
//! the spec adds (depth, duplicate names) are raised by our visitors, which keep the code in a
//! side channel and build the `field` path while the error unwinds through the containers.
//! Strings are read with serde_json's validation on, so a lone surrogate stops the parse at
//! its escape, in document order with every other fault.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use crate::error::{Code, Error, Result};
use crate::member_order::member_order;
use crate::path::{self, Step};

/// Deepest nesting accepted; the outermost container is level 1.
pub const MAX_DEPTH: usize = 125;

#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(Cow<'a, str>),
    Arr(Vec<Node<'a>>),
    /// Members in RFC 8785 order, names unique.
    Obj(Vec<Member<'a>>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member<'a> {
    pub name: Cow<'a, str>,
    pub value: Node<'a>,
    /// Document position, only needed to name the first repeated member.
    position: u32,
}

impl Member<'_> {
    /// Where the member stood in its object (0 for the first), which its RFC 8785 place in
    /// `Node::Obj` does not keep.
    pub fn position(&self) -> u32 {
        self.position
    }
}

impl Node<'_> {
    /// Scalars and empty containers are leaves (spec section 2).
    pub fn is_leaf(&self) -> bool {
        match self {
            Node::Arr(items) => items.is_empty(),
            Node::Obj(members) => members.is_empty(),
            _ => true,
        }
    }
}

/// Parses one JSON text; the first fault in document order is the one reported.
pub fn parse(input: &[u8]) -> Result<Node<'_>> {
    let text = std::str::from_utf8(input)
        .map_err(|_| Error::new(Code::InvalidUtf8, "the input is not valid UTF-8"))?;
    let state = ParseState::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let seed = NodeSeed {
        state: &state,
        depth: 1,
    };
    let parsed = seed
        .deserialize(&mut deserializer)
        .and_then(|node| deserializer.end().map(|()| node));
    parsed.map_err(|error| state.into_error(&error, input))
}

enum OwnedStep<'de> {
    Member(Cow<'de, str>),
    Index(usize),
}

#[derive(Default)]
struct ParseState<'de> {
    fault: Cell<Option<Code>>,
    /// Steps from the failing value up to the root, pushed while unwinding.
    steps: RefCell<Vec<OwnedStep<'de>>>,
}

impl<'de> ParseState<'de> {
    fn fail<E: de::Error>(&self, code: Code) -> E {
        self.fault.set(Some(code));
        E::custom(code.as_str())
    }

    fn unwind(&self, step: OwnedStep<'de>) {
        self.steps.borrow_mut().push(step);
    }

    fn field(&self) -> Option<String> {
        let steps = self.steps.borrow();
        if steps.is_empty() {
            return None;
        }
        Some(path::committed(steps.iter().rev().map(|step| match step {
            OwnedStep::Member(name) => Step::Member(name),
            OwnedStep::Index(index) => Step::Index(*index),
        })))
    }

    fn into_error(self, error: &serde_json::Error, input: &[u8]) -> Error {
        match self.fault.get() {
            Some(Code::DepthExceeded) => Error::new(
                Code::DepthExceeded,
                format!("arrays and objects nest deeper than {MAX_DEPTH} levels"),
            )
            .with_optional_field(self.field()),
            Some(Code::DuplicateMember) => Error::new(
                Code::DuplicateMember,
                "an object has two members of this name",
            )
            .with_optional_field(self.field()),
            Some(code) => Error::new(code, "the input was refused"),
            None => serde_fault(error, input, self.field()),
        }
    }
}

/// serde_json's error is opaque; its text is the only stable way to tell its codes apart.
fn serde_fault(error: &serde_json::Error, input: &[u8], field: Option<String>) -> Error {
    let text = error.to_string();
    // A high surrogate escape followed by the end of the input or by a malformed escape is
    // reported by serde_json as invalid JSON just after it; the spec knows the surrogate is
    // lone as soon as its escape is read, so that fault comes first.
    let lone_before_error =
        || first_lone_surrogate(input).is_some_and(|at| at < byte_offset(input, error));
    if text.starts_with("number out of range") {
        Error::new(
            Code::NumberOutOfRange,
            "a number is too large for an IEEE-754 double",
        )
        .with_optional_field(field)
    } else if text.starts_with("lone leading surrogate in hex escape")
        || text.starts_with("unexpected end of hex escape")
        || lone_before_error()
    {
        Error::new(
            Code::LoneSurrogate,
            "a string holds a \\u surrogate escape that is not part of a pair",
        )
    } else {
        Error::new(Code::InvalidJson, "the input is not RFC 8259 JSON")
    }
}

/// Byte offset of a serde_json error: its column counts the bytes read on its line.
fn byte_offset(input: &[u8], error: &serde_json::Error) -> usize {
    let line_start = match error.line().saturating_sub(1) {
        0 => 0,
        newlines => input
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(newlines - 1)
            .map_or(input.len(), |(i, _)| i + 1),
    };
    line_start + error.column()
}

/// Offset of the first `\u` escape of a surrogate that is not a high+low pair, reading the
/// strings of `input` lexically. The reading stops at a malformed escape: nothing after a
/// fault can come first.
fn first_lone_surrogate(input: &[u8]) -> Option<usize> {
    let unit_at = |at: usize| -> Option<u16> {
        let digits = input.get(at..at + 4)?;
        digits.iter().try_fold(0u16, |unit, &b| {
            let digit = char::from(b).to_digit(16)?;
            Some(unit << 4 | digit as u16)
        })
    };
    let escape_at = |at: usize| -> Option<u16> {
        (input.get(at..at + 2)? == b"\\u")
            .then(|| unit_at(at + 2))
            .flatten()
    };
    let (mut at, mut in_string) = (0, false);
    while at < input.len() {
        match (in_string, input[at]) {
            (_, b'"') => {
                in_string = !in_string;
                at += 1;
            }
            (true, b'\\') => match escape_at(at) {
                Some(0xd800..=0xdbff) if matches!(escape_at(at + 6), Some(0xdc00..=0xdfff)) => {
                    at += 12
                }
                Some(0xd800..=0xdfff) => return Some(at),
                Some(_) => at += 6,
                None if matches!(
                    input.get(at + 1),
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
                ) =>
                {
                    at += 2
                }
                None => return None,
            },
            _ => at += 1,
        }
    }
    None
}

#[derive(Clone, Copy)]
struct NodeSeed<'s, 'de> {
    state: &'s ParseState<'de>,
    /// Level of the container this value opens, if it is one.
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, 'de> {
    type Value = Node<'de>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, 'de> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, value: bool) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> std::result::Result<Node<'de>, E> {
        // `as` rounds to nearest, ties to even: the double the spec reads.
        Ok(Node::Num(value as f64))
    }

    fn visit_u64<E>(self, value: u64) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Num(value as f64))
    }

    fn visit_f64<E>(self, value: f64) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Num(value))
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(value)))
    }

    fn visit_str<E>(self, value: &str) -> std::result::Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(value.to_owned())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Node<'de>, A::Error> {
        if self.depth > MAX_DEPTH {
            return Err(self.state.fail(Code::DepthExceeded));
        }
        let child = NodeSeed {
            state: self.state,
            depth: self.depth + 1,
        };
        // Most containers are small: one allocation instead of growing from one element.
        let mut items = Vec::with_capacity(8);
        loop {
            match seq.next_element_seed(child) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(Node::Arr(items)),
                Err(error) => {
                    self.state.unwind(OwnedStep::Index(items.len()));
                    return Err(error);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Node<'de>, A::Error> {
        if self.depth > MAX_DEPTH {
            return Err(self.state.fail(Code::DepthExceeded));
        }
        let child = NodeSeed {
            state: self.state,
            depth: self.depth + 1,
        };
        let mut members: Vec<Member<'de>> = Vec::with_capacity(8);
        while let Some(name) = map.next_key_seed(NameSeed)? {
            match map.next_value_seed(child) {
                Ok(value) => members.push(Member {
                    name,
                    value,
                    position: members.len() as u32,
                }),
                Err(error) => {
                    self.state.unwind(OwnedStep::Member(name));
                    return Err(error);
                }
            }
        }
        // Stable: equal names stay in document order, next to each other.
        members.sort_by(|a, b| member_order(&a.name, &b.name));
        if let Some(repeated) = first_repeated(&members) {
            let name = members.swap_remove(repeated).name;
            self.state.unwind(OwnedStep::Member(name));
            return Err(self.state.fail(Code::DuplicateMember));
        }
        Ok(Node::Obj(members))
    }
}

/// Index of the member whose name repeats an earlier one first in document order.
fn first_repeated(sorted: &[Member<'_>]) -> Option<usize> {
    (1..sorted.len())
        .filter(|&i| sorted[i].name == sorted[i - 1].name)
        .min_by_key(|&i| sorted[i].position)
}

struct NameSeed;

impl<'de> DeserializeSeed<'de> for NameSeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Cow<'de, str>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for NameSeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> std::result::Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(value))
    }

    fn visit_str<E>(self, value: &str) -> std::result::Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(value.to_owned()))
    }
}

#[cfg(test)]
mod tests;
