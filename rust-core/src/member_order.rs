//! The order of object members in RFC 8785 output (section 3.2.3): names compared as arrays of
//! UTF-16 code units. Both the reader (which keeps objects in this order) and the writer use it.

use std::cmp::Ordering;

/// Order of member names as arrays of UTF-16 code units.
///
/// UTF-8 byte order is code point order, which differs from UTF-16 order only between
/// U+E000–U+FFFF and the supplementary planes (stored as surrogates, which sort first). Those
/// differ already in their lead byte (EE/EF against F0–F4), so one byte decides.
pub fn member_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).position(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some(i) => match (a[i], b[i]) {
            (0xee..=0xef, 0xf0..) => Ordering::Greater,
            (0xf0.., 0xee..=0xef) => Ordering::Less,
            (x, y) => x.cmp(&y),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_order_is_utf16() {
        assert_eq!(member_order("a", "ab"), Ordering::Less);
        assert_eq!(member_order("b", "ab"), Ordering::Greater);
        assert_eq!(member_order("\u{ffff}", "\u{10000}"), Ordering::Greater);
        assert_eq!(member_order("\u{e000}", "\u{10ffff}"), Ordering::Greater);
        assert_eq!(member_order("\u{d7ff}", "\u{10000}"), Ordering::Less);
        assert_eq!(member_order("\u{10000}", "\u{10001}"), Ordering::Less);
        assert_eq!(member_order("x", "x"), Ordering::Equal);
    }
}
