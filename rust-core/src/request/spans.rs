//! Where the values of a JSON text lie, for a text the reader (json.rs) has already accepted:
//! the exact bytes of a batch's records (their idempotency hashes), of a payload (its size
//! limit counts the text as received), of a number (msgspec tells `int` from `float` by its
//! spelling) and of a stored header's members (src/answer.rs). The text is valid, so nothing
//! here checks the grammar: strings are skipped to their closing quote, containers to their
//! matching bracket. Given text that is not valid, the spans are wrong but within the text.

use std::ops::Range;

use memchr::memchr2;

pub struct Spans<'a> {
    text: &'a [u8],
}

impl<'a> Spans<'a> {
    pub fn new(text: &'a [u8]) -> Self {
        Spans { text }
    }

    /// The bytes of `span` (none for a span beyond the text).
    pub fn text(&self, span: &Range<usize>) -> &'a [u8] {
        self.text.get(span.clone()).unwrap_or_default()
    }

    /// The text's one value, without the whitespace around it.
    pub fn whole(&self) -> Range<usize> {
        let start = self.skip_space(0);
        start..self.value_end(start)
    }

    /// The value spans of the members of the object at `object`, in document order.
    pub fn members(&self, object: &Range<usize>) -> Vec<Range<usize>> {
        self.named_members(object)
            .into_iter()
            .map(|(_, value)| value)
            .collect()
    }

    /// The spans of the names (quotes included) and values of the members of the object at
    /// `object`, in document order.
    pub fn named_members(&self, object: &Range<usize>) -> Vec<(Range<usize>, Range<usize>)> {
        // A record body has 5 members, a signed header 14.
        let mut members = Vec::with_capacity(16);
        let mut at = self.skip_space(object.start + 1);
        if self.text.get(at) != Some(&b'"') {
            return members;
        }
        loop {
            let name = at..self.string_end(at);
            let colon = self.skip_space(name.end);
            let start = self.skip_space(colon + 1);
            let end = self.value_end(start);
            members.push((name, start..end));
            let next = self.skip_space(end);
            if self.text.get(next) != Some(&b',') {
                return members;
            }
            at = self.skip_space(next + 1);
        }
    }

    /// The spans of the elements of the array at `array`, in order.
    pub fn elements(&self, array: &Range<usize>) -> Vec<Range<usize>> {
        let mut elements = Vec::new();
        let mut at = self.skip_space(array.start + 1);
        if self.text.get(at) == Some(&b']') {
            return elements;
        }
        loop {
            let end = self.value_end(at);
            elements.push(at..end);
            let next = self.skip_space(end);
            if self.text.get(next) != Some(&b',') {
                return elements;
            }
            at = self.skip_space(next + 1);
        }
    }

    fn skip_space(&self, mut at: usize) -> usize {
        while matches!(self.text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            at += 1;
        }
        at.min(self.text.len())
    }

    fn value_end(&self, start: usize) -> usize {
        match self.text.get(start) {
            Some(b'"') => self.string_end(start),
            Some(b'{' | b'[') => self.container_end(start),
            _ => self.scalar_end(start),
        }
    }

    /// After the closing quote of the string whose opening quote is at `start`.
    fn string_end(&self, start: usize) -> usize {
        let mut at = start + 1;
        while let Some(found) = memchr2(b'"', b'\\', &self.text[at.min(self.text.len())..]) {
            at += found;
            if self.text[at] == b'"' {
                return at + 1;
            }
            at += 2; // an escape: its next byte is never the closing quote
        }
        self.text.len()
    }

    fn container_end(&self, start: usize) -> usize {
        let mut depth = 0usize;
        let mut at = start;
        while let Some(&byte) = self.text.get(at) {
            match byte {
                b'"' => {
                    at = self.string_end(at);
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return at + 1;
                    }
                }
                _ => {}
            }
            at += 1;
        }
        self.text.len()
    }

    fn scalar_end(&self, start: usize) -> usize {
        let mut at = start;
        while let Some(byte) = self.text.get(at) {
            if matches!(byte, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            at += 1;
        }
        at
    }
}

/// msgspec's name of a JSON number's type: `int` for an integer spelled without fraction or
/// exponent that fits 64 bits (signed, or unsigned when positive), `float` otherwise.
pub fn number_type(text: &[u8]) -> &'static str {
    if text.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        return "float";
    }
    let (negative, digits) = match text.split_first() {
        Some((b'-', digits)) => (true, digits),
        _ => (false, text),
    };
    let value = digits.iter().try_fold(0u128, |value, digit| {
        value.checked_mul(10)?.checked_add(u128::from(digit - b'0'))
    });
    let fits = match value {
        Some(value) if negative => value <= 1u128 << 63,
        Some(value) => value <= u128::from(u64::MAX),
        None => false,
    };
    if fits {
        "int"
    } else {
        "float"
    }
}
