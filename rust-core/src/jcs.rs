//! RFC 8785 canonical output (docs/spec.md section 1.3).

use std::borrow::Cow;

use crate::error::Result;
use crate::json::{self, Node};
use crate::number;

/// Parses `input` and writes its canonical form.
pub fn canonicalize(input: &[u8]) -> Result<Vec<u8>> {
    let node = json::parse(input)?;
    let mut out = Vec::with_capacity(input.len() + 16);
    write(&node, &mut out);
    Ok(out)
}

/// Writes a parsed tree; its objects are already in member order.
pub fn write(node: &Node<'_>, out: &mut Vec<u8>) {
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool(true) => out.extend_from_slice(b"true"),
        Node::Bool(false) => out.extend_from_slice(b"false"),
        Node::Num(value) => number::write(*value, out),
        Node::Str(text) => write_text(text, out),
        Node::Arr(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Node::Obj(members) => {
            out.push(b'{');
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_text(&member.name, out);
                out.push(b':');
                write(&member.value, out);
            }
            out.push(b'}');
        }
    }
}

/// A parsed string. One borrowed from the input had no escape there, so it holds no quote,
/// backslash or control character: its canonical form is its input text.
#[expect(
    clippy::ptr_arg,
    reason = "the variant tells whether the input had an escape"
)]
fn write_text(text: &Cow<'_, str>, out: &mut Vec<u8>) {
    match text {
        Cow::Borrowed(raw) => {
            out.reserve(raw.len() + 2);
            out.push(b'"');
            out.extend_from_slice(raw.as_bytes());
            out.push(b'"');
        }
        Cow::Owned(text) => write_string(text, out),
    }
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any of eight bytes is a quote, a backslash or below 0x20 (SWAR, as serde_json's
/// reader does), so that plain runs are skipped a word at a time.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    (control
        | has_zero(word ^ (ONES * u64::from(b'"')))
        | has_zero(word ^ (ONES * u64::from(b'\\'))))
        != 0
}

pub fn write_string(text: &str, out: &mut Vec<u8>) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut plain_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if !word_needs_escape(word) {
                i += 8;
                continue;
            }
        }
        let byte = bytes[i];
        if needs_escape(byte) {
            out.extend_from_slice(&bytes[plain_from..i]);
            plain_from = i + 1;
            write_escape(byte, out);
        }
        i += 1;
    }
    out.extend_from_slice(&bytes[plain_from..]);
    out.push(b'"');
}

fn write_escape(byte: u8, out: &mut Vec<u8>) {
    match byte {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x09 => out.extend_from_slice(b"\\t"),
        0x0a => out.extend_from_slice(b"\\n"),
        0x0c => out.extend_from_slice(b"\\f"),
        0x0d => out.extend_from_slice(b"\\r"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(input: &str) -> String {
        String::from_utf8(canonicalize(input.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn whitespace_order_and_literals() {
        assert_eq!(
            canonical(" { \"b\" : [ true , false , null ] , \"a\" : { } , \"c\" : [ ] } "),
            "{\"a\":{},\"b\":[true,false,null],\"c\":[]}"
        );
    }

    #[test]
    fn rfc8785_sorting_example() {
        // RFC 8785 section 3.2.3.
        let input = "{\"\\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\",\"\\ufb33\":\"Hebrew \
                     Letter Dalet With Dagesh\",\"1\":\"One\",\"\\ud83d\\ude00\":\"Emoji: \
                     Grinning Face\",\"\\u0080\":\"Control\",\"\\u00f6\":\"Latin Small Letter O \
                     With Diaeresis\"}";
        let names: Vec<String> = match json::parse(input.as_bytes()).unwrap() {
            Node::Obj(members) => members.iter().map(|m| m.name.to_string()).collect(),
            _ => unreachable!(),
        };
        assert_eq!(
            names,
            [
                "\r",
                "1",
                "\u{80}",
                "\u{f6}",
                "\u{20ac}",
                "\u{1f600}",
                "\u{fb33}"
            ]
        );
    }

    #[test]
    fn string_escapes() {
        assert_eq!(
            canonical("\"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\\\"\\\\\\/\\u007f\\u2028é😀\""),
            "\"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\\\"\\\\/\u{7f}\u{2028}é😀\""
        );
    }

    #[test]
    fn escapes_at_every_offset_of_a_word() {
        for at in 0..20 {
            for special in ["\\\"", "\\\\", "\\n", "\\u0001", "\\u001f"] {
                // Already canonical: the output is the input.
                let text = format!("\"{}{special}{}é\"", "a".repeat(at), "b".repeat(19 - at));
                assert_eq!(canonical(&text), text);
            }
        }
        assert_eq!(
            canonical("\"\\u001f\\u0020\\u0021\\u007f\\u0080\""),
            "\"\\u001f !\u{7f}\u{80}\""
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            canonical("[1.0,1e0,10e-1,-0,1e20,1e21,0.000001,1.5e-7,-1.5E+3,5e-324]"),
            "[1,1,1,0,100000000000000000000,1e+21,0.000001,1.5e-7,-1500,5e-324]"
        );
    }
}
