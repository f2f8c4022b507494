//! Field kinds and `enc(value)` (docs/spec.md section 3).

use std::sync::OnceLock;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use crate::datetime;
use crate::error::{Code, Error, Result};
use crate::json::Node;
use crate::number::{self, MAX_SAFE_INTEGER};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Boolean,
    Currency,
    Date,
    Decimal,
    Digest,
    Free,
    Integer,
    Lat6,
    Lat9,
    Lon6,
    Money,
    Text,
    Timestamp,
    Uuid,
}

/// Every kind, in alphabetical order of its name.
pub const ALL: [Kind; 14] = [
    Kind::Boolean,
    Kind::Currency,
    Kind::Date,
    Kind::Decimal,
    Kind::Digest,
    Kind::Free,
    Kind::Integer,
    Kind::Lat6,
    Kind::Lat9,
    Kind::Lon6,
    Kind::Money,
    Kind::Text,
    Kind::Timestamp,
    Kind::Uuid,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Boolean => "boolean",
            Kind::Currency => "currency",
            Kind::Date => "date",
            Kind::Decimal => "decimal",
            Kind::Digest => "digest",
            Kind::Free => "free",
            Kind::Integer => "integer",
            Kind::Lat6 => "lat6",
            Kind::Lat9 => "lat9",
            Kind::Lon6 => "lon6",
            Kind::Money => "money",
            Kind::Text => "text",
            Kind::Timestamp => "timestamp",
            Kind::Uuid => "uuid",
        }
    }

    pub fn from_name(name: &str) -> Result<Kind> {
        Ok(match name {
            "boolean" => Kind::Boolean,
            "currency" => Kind::Currency,
            "date" => Kind::Date,
            "decimal" => Kind::Decimal,
            "digest" => Kind::Digest,
            "free" => Kind::Free,
            "integer" => Kind::Integer,
            "lat6" => Kind::Lat6,
            "lat9" => Kind::Lat9,
            "lon6" => Kind::Lon6,
            "money" => Kind::Money,
            "text" => Kind::Text,
            "timestamp" => Kind::Timestamp,
            "uuid" => Kind::Uuid,
            _ => return Err(Error::new(Code::UnknownKind, "unknown field kind")),
        })
    }

    /// What the kind takes, for the `value_type` message: says what to send instead.
    pub fn takes(self) -> &'static str {
        match self {
            Kind::Boolean => "true or false",
            Kind::Currency
            | Kind::Date
            | Kind::Digest
            | Kind::Text
            | Kind::Timestamp
            | Kind::Uuid => "a string",
            Kind::Decimal | Kind::Lat6 | Kind::Lat9 | Kind::Lon6 => "a number",
            Kind::Integer => "a whole number",
            Kind::Money => MINOR_UNITS,
            Kind::Free => "a JSON scalar, an empty object or an empty array",
        }
    }
}

/// How money is sent: the refusals of the kind `money` say it, so that `12.50` and `"12.50"`
/// are answered with what to send instead (`1250`).
pub const MINOR_UNITS: &str = "a whole number of minor units (cents)";

/// A value as `encode` sees it: containers only by whether they are empty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(&'a str),
    /// A string that has no UTF-8 form (a Python `str` with a lone surrogate).
    UnencodableStr,
    EmptyObject,
    EmptyArray,
    NonEmptyContainer,
    /// Not a JSON value at all (from the Python binding).
    Other,
}

impl<'a> Value<'a> {
    pub fn of(node: &'a Node<'_>) -> Value<'a> {
        match node {
            Node::Null => Value::Null,
            Node::Bool(value) => Value::Bool(*value),
            Node::Num(value) => Value::Num(*value),
            Node::Str(text) => Value::Str(text),
            Node::Arr(items) if items.is_empty() => Value::EmptyArray,
            Node::Obj(members) if members.is_empty() => Value::EmptyObject,
            _ => Value::NonEmptyContainer,
        }
    }
}

/// Appends `enc(value)` for `kind` to `out`; on error `out` may hold a partial prefix.
pub fn encode(kind: Kind, value: Value<'_>, out: &mut Vec<u8>) -> Result<()> {
    if let Value::Num(number) = value {
        if !number.is_finite() {
            return Err(Error::new(Code::NumberOutOfRange, "numbers must be finite"));
        }
        if number.abs() > MAX_SAFE_INTEGER {
            return Err(Error::new(
                Code::IntegerOutOfRange,
                "numbers must be at most 2^53-1 in magnitude; send larger values as minor units \
                 or strings",
            ));
        }
    }
    match (kind, value) {
        (Kind::Free, value) => encode_free(value, out),
        (Kind::Boolean, Value::Bool(flag)) => tagged(b"bool:", boolean(flag), out),
        (Kind::Money, Value::Num(v)) => money(v, out),
        (Kind::Integer, Value::Num(v)) => whole(b"int:", v, Code::NotInteger, out),
        (Kind::Decimal, Value::Num(v)) => {
            out.extend_from_slice(b"dec:");
            number::write(v, out);
            Ok(())
        }
        (Kind::Lat6, Value::Num(v)) => coordinate(b"lat6:", v, 90.0, 6, out),
        (Kind::Lat9, Value::Num(v)) => coordinate(b"lat9:", v, 90.0, 9, out),
        (Kind::Lon6, Value::Num(v)) => coordinate(b"lon6:", v, 180.0, 6, out),
        (Kind::Text, Value::Str(text)) => {
            out.extend_from_slice(b"txt:");
            push_nfc(text, out);
            Ok(())
        }
        (Kind::Currency, Value::Str(text)) => checked(kind, b"cur:", currency_code(text), out),
        (Kind::Date, Value::Str(text)) => {
            let date = datetime::is_date(text).then_some(text);
            checked(kind, b"date:", date, out)
        }
        (Kind::Timestamp, Value::Str(text)) => {
            checked(kind, b"time:", datetime::timestamp_utc(text), out)
        }
        (Kind::Uuid, Value::Str(text)) => checked(kind, b"uuid:", canonical_uuid(text), out),
        (Kind::Digest, Value::Str(text)) => {
            checked(kind, b"digest:sha256:", lowercase_digest(text), out)
        }
        (
            Kind::Text | Kind::Currency | Kind::Date | Kind::Timestamp | Kind::Uuid | Kind::Digest,
            Value::UnencodableStr,
        ) => Err(unencodable()),
        _ => Err(Error::new(
            Code::ValueType,
            format!("the kind {} takes {}", kind.name(), kind.takes()),
        )),
    }
}

fn encode_free(value: Value<'_>, out: &mut Vec<u8>) -> Result<()> {
    match value {
        Value::Str(text) => tagged(b"str:", text, out),
        Value::Num(v) => {
            out.extend_from_slice(b"num:");
            number::write(v, out);
            Ok(())
        }
        Value::Bool(flag) => tagged(b"bool:", boolean(flag), out),
        Value::Null => tagged(b"null:", "", out),
        Value::EmptyObject => tagged(b"obj:{}", "", out),
        Value::EmptyArray => tagged(b"arr:[]", "", out),
        Value::UnencodableStr => Err(unencodable()),
        Value::NonEmptyContainer | Value::Other => Err(Error::new(
            Code::ValueType,
            "only scalars and empty objects or arrays are field values",
        )),
    }
}

fn boolean(flag: bool) -> &'static str {
    if flag {
        "true"
    } else {
        "false"
    }
}

fn tagged(tag: &[u8], body: impl AsRef<[u8]>, out: &mut Vec<u8>) -> Result<()> {
    out.extend_from_slice(tag);
    out.extend_from_slice(body.as_ref());
    Ok(())
}

/// `tag` and the body the kind's rule made of the value, or the kind's refusal.
fn checked(
    kind: Kind,
    tag: &[u8],
    body: Option<impl AsRef<[u8]>>,
    out: &mut Vec<u8>,
) -> Result<()> {
    match body {
        Some(body) => tagged(tag, body, out),
        None => Err(refusal(kind)),
    }
}

fn money(value: f64, out: &mut Vec<u8>) -> Result<()> {
    if value.fract() != 0.0 {
        return Err(Error::new(
            Code::MoneyFraction,
            format!("money is {MINOR_UNITS}: 12.50 is sent as 1250"),
        ));
    }
    whole(b"money:", value, Code::MoneyFraction, out)
}

fn whole(tag: &[u8], value: f64, code: Code, out: &mut Vec<u8>) -> Result<()> {
    if value.fract() != 0.0 {
        return Err(Error::new(code, "the number must be a whole number"));
    }
    out.extend_from_slice(tag);
    number::write(value, out);
    Ok(())
}

fn coordinate(tag: &[u8], value: f64, limit: f64, decimals: u32, out: &mut Vec<u8>) -> Result<()> {
    if !(-limit..=limit).contains(&value) {
        return Err(Error::new(
            Code::CoordinateOutOfRange,
            format!("the coordinate must lie between -{limit} and {limit}"),
        ));
    }
    out.extend_from_slice(tag);
    number::write_fixed(value, decimals, out);
    Ok(())
}

fn refusal(kind: Kind) -> Error {
    let (code, rule) = match kind {
        Kind::Currency => (
            Code::CurrencyInvalid,
            "an ISO 4217 code of three ASCII letters",
        ),
        Kind::Date => (Code::DateInvalid, "an existing date YYYY-MM-DD"),
        Kind::Timestamp => (
            Code::TimestampInvalid,
            "an RFC 3339 date-time without leap second, in years 0001-9999 once in UTC",
        ),
        Kind::Uuid => (
            Code::UuidInvalid,
            "a UUID in one of the four accepted spellings",
        ),
        _ => (Code::DigestInvalid, "sha256: and 64 hexadecimal digits"),
    };
    Error::new(code, format!("the value must be {rule}"))
}

fn unencodable() -> Error {
    Error::new(
        Code::LoneSurrogate,
        "the string holds a lone surrogate and has no UTF-8 form",
    )
}

/// Characters below U+0300 are all NFC_Quick_Check=Yes and combine with nothing before them;
/// their UTF-8 lead bytes are below 0xCC. Most text is only those, and then is its own NFC.
fn push_nfc(text: &str, out: &mut Vec<u8>) {
    let below_u0300 = text.is_ascii() || text.bytes().all(|b| b < 0xcc);
    if below_u0300 || is_nfc_quick(text.chars()) == IsNormalized::Yes {
        out.extend_from_slice(text.as_bytes());
    } else {
        let normalized: String = text.nfc().collect();
        out.extend_from_slice(normalized.as_bytes());
    }
}

static CURRENCY_LIST: &str = include_str!("../data/iso4217.txt");

/// Three ASCII letters in either case, upper-cased, that the embedded list holds.
fn currency_code(text: &str) -> Option<[u8; 3]> {
    // One bit per three-letter code, built once from the embedded list.
    static CODES: OnceLock<Vec<u64>> = OnceLock::new();
    let index = |code: [u8; 3]| -> usize {
        code.iter()
            .fold(0, |acc, &letter| acc * 26 + usize::from(letter - b'A'))
    };
    let upper = |code: &[u8]| -> Option<[u8; 3]> {
        let code: [u8; 3] = code.try_into().ok()?;
        code.iter()
            .all(u8::is_ascii_alphabetic)
            .then(|| code.map(|letter| letter.to_ascii_uppercase()))
    };
    let codes = CODES.get_or_init(|| {
        let mut bits = vec![0u64; 26 * 26 * 26 / 64 + 1];
        let lines = CURRENCY_LIST.lines().map(str::trim);
        for code in lines
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| upper(line.as_bytes()))
        {
            let i = index(code);
            bits[i / 64] |= 1 << (i % 64);
        }
        bits
    });
    let code = upper(text.as_bytes())?;
    let i = index(code);
    (codes[i / 64] & (1 << (i % 64)) != 0).then_some(code)
}

/// The 64 digits after `sha256:` (itself in lower case), in lower case.
fn lowercase_digest(text: &str) -> Option<String> {
    let hex = text.strip_prefix("sha256:")?;
    let valid = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| hex.to_ascii_lowercase())
}

/// The lowercase 8-4-4-4-12 form of an accepted UUID spelling.
fn canonical_uuid(text: &str) -> Option<[u8; 36]> {
    let bytes = text.as_bytes();
    let hyphenated = if bytes.len() == 45 && bytes[..9].eq_ignore_ascii_case(b"urn:uuid:") {
        &bytes[9..]
    } else if bytes.len() == 38 && bytes[0] == b'{' && bytes[37] == b'}' {
        &bytes[1..37]
    } else {
        bytes
    };
    const HYPHENS: [usize; 4] = [8, 13, 18, 23];
    let mut out = [b'-'; 36];
    let digits: Vec<u8> = match hyphenated.len() {
        // Without hyphens only as the bare spelling (4), never in braces or after urn:uuid:.
        32 if hyphenated.len() == bytes.len() => bytes.to_vec(),
        36 if HYPHENS.iter().all(|&i| hyphenated[i] == b'-') => hyphenated
            .iter()
            .enumerate()
            .filter(|(i, _)| !HYPHENS.contains(i))
            .map(|(_, &b)| b)
            .collect(),
        _ => return None,
    };
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut digits = digits.iter().map(u8::to_ascii_lowercase);
    for (i, slot) in out.iter_mut().enumerate() {
        if !HYPHENS.contains(&i) {
            *slot = digits.next()?;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests;
