//! An ingest request read once (docs/records.md, "Ingest"): the body of `POST /v1/records` or
//! `POST /v1/records:batch` is parsed by the core's reader (json.rs, with its limits and
//! refusals), its envelope is checked, and each record keeps its payload as the parsed tree
//! that `ingest::prepare` commits: no part of the body is parsed twice.
//!
//! The refusals are the service's (docs/records.md, "Errors"), word for word:
//!
//! - the body's own faults are the reader's errors, raised as they are;
//! - a body or a batch item of another shape than the request schema is `request_invalid`,
//!   with msgspec's words and member (`Expected \`str\`, got \`int\``, field `stream`): the
//!   schema was decoded by msgspec before this module, and its words are kept;
//! - a batch of no record or more than `MAX_BATCH` is `batch_size_invalid`, a malformed
//!   `Idempotency-Key` `idempotency_key_invalid`;
//! - a record whose `record_type`, `subject_id` or `occurred_at` breaks its rule carries that
//!   refusal (`RecordRead::refusal`), which the service reports after the stream's checks.

pub(crate) mod spans;

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;

use crate::commitment::Hash;
use crate::datetime;
use crate::error::{Code, Error, Result};
use crate::json::{self, Member, Node};
use crate::leaves::MAX_PAYLOAD_LEN;
use crate::path::has_control_character;
use crate::sha256::{self, Message, Scratch};
use spans::{number_type, Spans};

/// Records of one batch, at most.
pub const MAX_BATCH: usize = 1000;
pub const MAX_RECORD_TYPE: usize = 128;
pub const MAX_SUBJECT_ID: usize = 256;
pub const MAX_IDEMPOTENCY_KEY: usize = 255;

/// One record of a request, its envelope of the schema's shape.
#[derive(Debug)]
pub struct RecordRead<'a> {
    pub stream: Cow<'a, str>,
    pub record_type: Cow<'a, str>,
    pub subject_id: Cow<'a, str>,
    /// `occurred_at` in UTC, as the kind `timestamp` writes it (empty when it is refused).
    pub occurred_at: String,
    pub payload: Node<'a>,
    /// Bytes of the payload's text as received; `None` when the body is no longer than a
    /// payload may be (then no payload can be too large, and its text was not looked for).
    pub payload_len: Option<usize>,
    /// The record's idempotency key (the request's, or `<key>#<index>` for a batch's item)
    /// and the SHA-256 of its text as received (the whole body of a single post).
    pub idempotency: Option<(String, Hash)>,
    /// The first envelope rule it breaks (`record_type`, `subject_id`, `occurred_at`).
    pub refusal: Option<Error>,
}

/// One item of a batch: a record, or its refusal (`request_invalid`).
#[derive(Debug)]
pub enum Item<'a> {
    Record(RecordRead<'a>),
    Refused(Error),
}

/// Reads the body of a single post.
pub fn read_record<'a>(body: &'a [u8], key: Option<&str>) -> Result<RecordRead<'a>> {
    let tree = json::parse(body)?;
    let spans = Spans::new(body);
    let whole = || spans.whole();
    let mut layout = Layout::new(&spans, &whole);
    let envelope = envelope(tree, &mut layout, body.len() > MAX_PAYLOAD_LEN)?;
    let idempotency = match key {
        Some(key) => {
            check_key(key)?;
            Some((key.to_owned(), digest(body)))
        }
        None => None,
    };
    Ok(envelope.into_record(idempotency))
}

/// Reads the body of a batch: one item per record, in order.
pub fn read_batch<'a>(body: &'a [u8], key: Option<&str>) -> Result<Vec<Item<'a>>> {
    let tree = json::parse(body)?;
    let spans = Spans::new(body);
    let (records, at) = batch_records(tree, &spans)?;
    if !(1..=MAX_BATCH).contains(&records.len()) {
        return Err(Error::new(
            Code::BatchSizeInvalid,
            format!("a batch holds 1 to {MAX_BATCH} records"),
        )
        .with_field("records"));
    }
    if let Some(key) = key {
        check_key(key)?;
    }
    // The records' texts, found once for the batch when first needed: for a hash, a payload
    // of a body longer than a payload may be, or a number a refusal names.
    let texts = OnceCell::new();
    let text = |index: usize| -> Range<usize> {
        texts.get_or_init(|| {
            let top = spans.members(&spans.whole());
            spans.elements(&top[at])
        })[index]
            .clone()
    };
    let measure = body.len() > MAX_PAYLOAD_LEN;
    let mut scratch = Scratch::default();
    let items = records
        .into_iter()
        .enumerate()
        .map(|(index, node)| {
            let item = || text(index);
            let mut layout = Layout::new(&spans, &item);
            match envelope(node, &mut layout, measure) {
                Err(refusal) => Item::Refused(refusal),
                Ok(envelope) => {
                    let idempotency = key.map(|key| {
                        let text = spans.text(&text(index));
                        let hash = sha256::digest(&Message::new(&[text]), &mut scratch);
                        (format!("{key}#{index}"), hash)
                    });
                    Item::Record(envelope.into_record(idempotency))
                }
            }
        })
        .collect();
    Ok(items)
}

fn digest(text: &[u8]) -> Hash {
    sha256::digest(&Message::new(&[text]), &mut Scratch::default())
}

/// `Idempotency-Key`: 1 to 255 letters, digits, `.`, `_`, `:` or `-`.
fn check_key(key: &str) -> Result<()> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-');
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY || !key.bytes().all(allowed) {
        return Err(Error::new(
            Code::IdempotencyKeyInvalid,
            "an Idempotency-Key is 1 to 255 letters, digits, '.', '_', ':' or '-'",
        )
        .with_field("Idempotency-Key"));
    }
    Ok(())
}

/// Where a record's text and its members' values lie: looked for only when asked (a size, or
/// the spelling of a number a refusal names).
struct Layout<'s, 'a> {
    spans: &'s Spans<'a>,
    item: &'s dyn Fn() -> Range<usize>,
    members: Option<Vec<Range<usize>>>,
}

impl<'s, 'a> Layout<'s, 'a> {
    fn new(spans: &'s Spans<'a>, item: &'s dyn Fn() -> Range<usize>) -> Self {
        Layout {
            spans,
            item,
            members: None,
        }
    }

    fn item(&self) -> &'a [u8] {
        self.spans.text(&(self.item)())
    }

    /// The text of the value of the item's member `index` (in document order).
    fn member(&mut self, index: usize) -> &'a [u8] {
        let spans = self.spans;
        let members = self
            .members
            .get_or_insert_with(|| spans.members(&(self.item)()));
        spans.text(&members[index])
    }
}

/// msgspec's name of a value's JSON type; `number` gives a number's text when asked.
fn type_name<'t>(node: &Node<'_>, number: impl FnOnce() -> &'t [u8]) -> &'static str {
    match node {
        Node::Null => "null",
        Node::Bool(_) => "bool",
        Node::Num(_) => number_type(number()),
        Node::Str(_) => "str",
        Node::Arr(_) => "array",
        Node::Obj(_) => "object",
    }
}

fn request_invalid(message: String, field: Option<&str>) -> Error {
    Error::new(Code::RequestInvalid, message).with_optional_field(field.map(str::to_owned))
}

/// An object's members in the order they were sent.
fn in_document_order(mut members: Vec<Member<'_>>) -> Vec<Member<'_>> {
    members.sort_unstable_by_key(Member::position);
    members
}

/// The batch's records (`{"records": [...]}`) and the place of `records` among the body's
/// members.
fn batch_records<'a>(tree: Node<'a>, spans: &Spans<'_>) -> Result<(Vec<Node<'a>>, usize)> {
    let members = match tree {
        Node::Obj(members) => members,
        other => {
            let kind = type_name(&other, || spans.text(&spans.whole()));
            return Err(request_invalid(
                format!("Expected `object`, got `{kind}`"),
                None,
            ));
        }
    };
    let mut records = None;
    for (index, member) in in_document_order(members).into_iter().enumerate() {
        if member.name != "records" {
            let message = format!("Object contains unknown field `{}`", member.name);
            return Err(request_invalid(message, None));
        }
        match member.value {
            Node::Arr(items) => records = Some((items, index)),
            other => {
                let kind = type_name(&other, || spans.text(&spans.members(&spans.whole())[index]));
                let message = format!("Expected `array`, got `{kind}`");
                return Err(request_invalid(message, Some("records")));
            }
        }
    }
    records.ok_or_else(|| {
        request_invalid(
            "Object missing required field `records`".to_owned(),
            Some("records"),
        )
    })
}

/// The members of a record body, in the schema's order.
const MEMBERS: [&str; 5] = [
    "stream",
    "record_type",
    "occurred_at",
    "subject_id",
    "payload",
];

/// A record body's members, its shape checked.
struct Envelope<'a> {
    texts: [Cow<'a, str>; 4],
    payload: Node<'a>,
    payload_len: Option<usize>,
}

/// Checks a record body's shape as msgspec decoded it (members in document order: an unknown
/// one, or one not a string, is refused as met; then the first missing one). `measure`: the
/// payload's text may exceed a payload's limit, so its length is taken.
fn envelope<'a>(
    node: Node<'a>,
    layout: &mut Layout<'_, '_>,
    measure: bool,
) -> Result<Envelope<'a>> {
    let members = match node {
        Node::Obj(members) => members,
        other => {
            let kind = type_name(&other, || layout.item());
            return Err(request_invalid(
                format!("Expected `object`, got `{kind}`"),
                None,
            ));
        }
    };
    let mut found: [Option<Node<'a>>; 5] = Default::default();
    let mut payload_at = 0;
    for (index, member) in in_document_order(members).into_iter().enumerate() {
        let Some(slot) = MEMBERS.iter().position(|name| member.name == *name) else {
            let message = format!("Object contains unknown field `{}`", member.name);
            return Err(request_invalid(message, None));
        };
        if slot < 4 && !matches!(member.value, Node::Str(_)) {
            let kind = type_name(&member.value, || layout.member(index));
            let message = format!("Expected `str`, got `{kind}`");
            return Err(request_invalid(message, Some(MEMBERS[slot])));
        }
        if slot == 4 {
            payload_at = index;
        }
        found[slot] = Some(member.value);
    }
    let [stream, record_type, occurred_at, subject_id, payload] = found;
    let missing = |slot: usize| {
        request_invalid(
            format!("Object missing required field `{}`", MEMBERS[slot]),
            Some(MEMBERS[slot]),
        )
    };
    let text = |node: Option<Node<'a>>, slot: usize| match node {
        Some(Node::Str(text)) => Ok(text),
        _ => Err(missing(slot)),
    };
    let texts = [
        text(stream, 0)?,
        text(record_type, 1)?,
        text(occurred_at, 2)?,
        text(subject_id, 3)?,
    ];
    let payload = payload.ok_or_else(|| missing(4))?;
    let payload_len = measure.then(|| layout.member(payload_at).len());
    Ok(Envelope {
        texts,
        payload,
        payload_len,
    })
}

impl<'a> Envelope<'a> {
    fn into_record(self, idempotency: Option<(String, Hash)>) -> RecordRead<'a> {
        let [stream, record_type, occurred_at, subject_id] = self.texts;
        let utc = datetime::timestamp_utc(&occurred_at);
        let refusal = label(
            &record_type,
            "record_type",
            MAX_RECORD_TYPE,
            Code::RecordTypeInvalid,
        )
        .or_else(|| {
            label(
                &subject_id,
                "subject_id",
                MAX_SUBJECT_ID,
                Code::SubjectIdInvalid,
            )
        })
        .or_else(|| {
            utc.is_none().then(|| {
                Error::new(
                    Code::OccurredAtInvalid,
                    "occurred_at must be an RFC 3339 timestamp",
                )
                .with_field("occurred_at")
            })
        });
        RecordRead {
            stream,
            record_type,
            subject_id,
            occurred_at: utc.unwrap_or_default(),
            payload: self.payload,
            payload_len: self.payload_len,
            idempotency,
            refusal,
        }
    }
}

/// A label's rule: 1 to `limit` characters, none a control character.
fn label(value: &str, field: &str, limit: usize, code: Code) -> Option<Error> {
    let fits = !value.is_empty() && value.chars().count() <= limit;
    (!fits || has_control_character(value)).then(|| {
        Error::new(
            code,
            format!("{field} must be 1 to {limit} characters without control characters"),
        )
        .with_field(field)
    })
}

#[cfg(test)]
mod tests;
