//! The answers of the ingest routes (docs/records.md, "Endpoints" and "Batches"), written from
//! the signed records: `RecordOut` of `POST /v1/records` and `BatchOut` of
//! `POST /v1/records:batch` (python/recordseal/web/schemas.py), byte for byte as msgspec
//! encodes those structs.
//!
//! A record's answer repeats members of its signed header (record id, stream, seq, root, key
//! id, field count): the header is RFC 8785 text the service wrote, whose strings are escaped
//! as msgspec escapes them, so each member's text is copied from it as it stands.

use std::fmt::Write as _;
use std::ops::Range;

use crate::request::spans::Spans;

/// What the service answers for one record of a request.
pub enum Answer<'a> {
    /// A record stored now, or before (`replayed`: an `Idempotency-Key` named it).
    Record {
        header: &'a [u8],
        signature: &'a [u8],
        chain_leaf: &'a [u8],
        replayed: bool,
    },
    /// A refused record: its status and its problem, as JSON text.
    Problem { status: u16, problem: &'a [u8] },
}

/// A header that lacks a member the answer repeats: not one the service signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderWithout(pub &'static str);

impl std::fmt::Display for HeaderWithout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a stored header has no member {:?}", self.0)
    }
}

impl std::error::Error for HeaderWithout {}

/// The header members an answer repeats, in the order `RecordOut` writes them.
const REPEATED: [&str; 6] = [
    "record_id",
    "stream",
    "seq",
    "root",
    "key_id",
    "field_count",
];

/// Appends `RecordOut` of a stored record.
pub fn write_record(
    out: &mut Vec<u8>,
    header: &[u8],
    signature: &[u8],
    chain_leaf: &[u8],
    replayed: bool,
) -> Result<(), HeaderWithout> {
    let spans = Spans::new(header);
    let members = spans.named_members(&spans.whole());
    let member = |name: &'static str| -> Result<&[u8], HeaderWithout> {
        members
            .iter()
            .find(|(key, _)| is_name(spans.text(key), name))
            .map(|(_, value): &(Range<usize>, Range<usize>)| spans.text(value))
            .filter(|text| !text.is_empty())
            .ok_or(HeaderWithout(name))
    };
    let [record_id, stream, seq, root, key_id, field_count] = REPEATED;
    let values = [
        member(record_id)?,
        member(stream)?,
        member(seq)?,
        member(root)?,
        member(key_id)?,
        member(field_count)?,
    ];
    out.reserve(header.len() + 2 * (signature.len() + chain_leaf.len()) + 200);
    out.extend_from_slice(b"{\"record_id\":");
    out.extend_from_slice(values[0]);
    out.extend_from_slice(b",\"stream\":");
    out.extend_from_slice(values[1]);
    out.extend_from_slice(b",\"seq\":");
    out.extend_from_slice(values[2]);
    out.extend_from_slice(b",\"root\":");
    out.extend_from_slice(values[3]);
    out.extend_from_slice(b",\"chain_leaf\":");
    write_hex(chain_leaf, out);
    out.extend_from_slice(b",\"header\":");
    out.extend_from_slice(header);
    out.extend_from_slice(b",\"signature\":");
    write_hex(signature, out);
    out.extend_from_slice(b",\"key_id\":");
    out.extend_from_slice(values[4]);
    out.extend_from_slice(b",\"field_count\":");
    out.extend_from_slice(values[5]);
    out.extend_from_slice(b",\"attestation\":\"hosted-ingest\",\"replayed\":");
    out.extend_from_slice(if replayed { b"true}" } else { b"false}" });
    Ok(())
}

/// `BatchOut` of a batch's answers, in order.
pub fn batch(answers: &[Answer<'_>]) -> Result<Vec<u8>, HeaderWithout> {
    let accepted = answers
        .iter()
        .filter(|answer| matches!(answer, Answer::Record { .. }))
        .count();
    let mut out = Vec::with_capacity(answers.len() * 1536 + 100);
    let mut number = String::new();
    write!(
        number,
        "{{\"accepted\":{accepted},\"refused\":{},\"results\":[",
        answers.len() - accepted
    )
    .expect("writing to a String");
    out.extend_from_slice(number.as_bytes());
    for (index, answer) in answers.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        number.clear();
        let status = match answer {
            Answer::Record { .. } => 201,
            Answer::Problem { status, .. } => *status,
        };
        write!(number, "{{\"index\":{index},\"status\":{status},").expect("writing to a String");
        out.extend_from_slice(number.as_bytes());
        match answer {
            Answer::Record {
                header,
                signature,
                chain_leaf,
                replayed,
            } => {
                out.extend_from_slice(b"\"record\":");
                write_record(&mut out, header, signature, chain_leaf, *replayed)?;
            }
            Answer::Problem { problem, .. } => {
                out.extend_from_slice(b"\"problem\":");
                out.extend_from_slice(problem);
            }
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"attestation\":\"hosted-ingest\"}");
    Ok(out)
}

/// Whether a member name's text (quotes included, no escape) is `name`.
fn is_name(text: &[u8], name: &str) -> bool {
    text.len() == name.len() + 2 && &text[1..text.len() - 1] == name.as_bytes()
}

fn write_hex(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for byte in bytes {
        out.push(HEX[usize::from(byte >> 4)]);
        out.push(HEX[usize::from(byte & 0xf)]);
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"attestation":"hosted-ingest","field_count":2,"format":"recordseal/header/v1","ingested_at":"2026-11-21T08:00:00.000001Z","key_id":"0123456789abcdef","occurred_at":"2026-11-21T08:00:00Z","prev":"00","record_id":"r-\"1\"","record_type":"t","root":"ab","seq":17,"stream":"s\u0001é","subject_ref":"x","tenant":"acme"}"#;

    #[test]
    fn a_record_answer_repeats_its_header_members() {
        let mut out = Vec::new();
        write_record(&mut out, HEADER.as_bytes(), &[0xff, 0x01], &[0xab], true).unwrap();
        let expected = format!(
            r#"{{"record_id":"r-\"1\"","stream":"s\u0001é","seq":17,"root":"ab","chain_leaf":"ab","header":{},"signature":"ff01","key_id":"0123456789abcdef","field_count":2,"attestation":"hosted-ingest","replayed":true}}"#,
            HEADER
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn a_batch_answer_in_order() {
        let answers = [
            Answer::Problem {
                status: 422,
                problem: br#"{"code":"x"}"#,
            },
            Answer::Record {
                header: HEADER.as_bytes(),
                signature: b"",
                chain_leaf: b"",
                replayed: false,
            },
        ];
        let out = String::from_utf8(batch(&answers).unwrap()).unwrap();
        assert!(out.starts_with(
            r#"{"accepted":1,"refused":1,"results":[{"index":0,"status":422,"problem":{"code":"x"}},{"index":1,"status":201,"record":{"record_id":"#
        ));
        assert!(out.ends_with(r#""replayed":false}}],"attestation":"hosted-ingest"}"#));
    }

    #[test]
    fn a_header_without_a_member_is_refused() {
        let mut out = Vec::new();
        let error = write_record(&mut out, br#"{"record_id":"r"}"#, b"", b"", false);
        assert_eq!(error, Err(HeaderWithout("stream")));
        for text in [&b""[..], b"{", b"{\"", b"[1]", b"{\"a\":"] {
            assert!(write_record(&mut out, text, b"", b"", false).is_err());
        }
    }
}
