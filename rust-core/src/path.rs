//! Committed paths `<vector>:<pointer>` (docs/spec.md section 2).

/// One step from a container to a child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    Member(&'a str),
    Index(usize),
}

/// A committed path under construction. Vector and pointer are kept apart so that the walk
/// pushes and pops a step without rebuilding the text.
#[derive(Default)]
pub struct PathBuf {
    vector: Vec<u8>,
    pointer: String,
    marks: Vec<usize>,
}

impl PathBuf {
    pub fn new() -> Self {
        PathBuf::default()
    }

    pub fn push(&mut self, step: &Step<'_>) {
        self.marks.push(self.pointer.len());
        self.pointer.push('/');
        match step {
            Step::Member(name) => {
                self.vector.push(b'o');
                escape_token(name, &mut self.pointer);
            }
            Step::Index(index) => {
                self.vector.push(b'a');
                push_decimal(*index as u64, &mut self.pointer);
            }
        }
    }

    pub fn pop(&mut self) {
        if let Some(mark) = self.marks.pop() {
            self.vector.pop();
            self.pointer.truncate(mark);
        }
    }

    /// Length in bytes of the committed text.
    pub fn len(&self) -> usize {
        self.vector.len() + 1 + self.pointer.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vector.is_empty()
    }

    pub fn write_to(&self, out: &mut String) {
        // The vector holds only ASCII `o` and `a`.
        out.extend(self.vector.iter().map(|&b| b as char));
        out.push(':');
        out.push_str(&self.pointer);
    }

    pub fn committed(&self) -> String {
        let mut out = String::with_capacity(self.len());
        self.write_to(&mut out);
        out
    }
}

/// The committed path of a sequence of steps from the root.
pub fn committed<'a>(steps: impl IntoIterator<Item = Step<'a>>) -> String {
    let mut path = PathBuf::new();
    for step in steps {
        path.push(&step);
    }
    path.committed()
}

/// RFC 6901 token: `~` as `~0`, `/` as `~1`.
pub fn escape_token(name: &str, out: &mut String) {
    if !name.bytes().any(|b| b == b'~' || b == b'/') {
        out.push_str(name);
        return;
    }
    for c in name.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            _ => out.push(c),
        }
    }
}

pub fn push_decimal(mut value: u64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// Unicode general category Cc: U+0000–U+001F and U+007F–U+009F.
pub fn has_control_character(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b < 0x20
            || b == 0x7f
            // U+0080–U+009F are C2 80–C2 9F in UTF-8.
            || (b == 0xc2 && matches!(bytes.get(i + 1), Some(0x80..=0x9f)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_paths_of_the_spec() {
        let path = committed([Step::Member("a"), Step::Member("b"), Step::Index(0)]);
        assert_eq!(path, "ooa:/a/b/0");
        let path = committed([
            Step::Member("a"),
            Step::Member("b"),
            Step::Index(1),
            Step::Member("c/d"),
        ]);
        assert_eq!(path, "ooao:/a/b/1/c~1d");
        assert_eq!(committed([Step::Member("")]), "o:/");
        assert_eq!(committed([Step::Member("~/~")]), "o:/~0~1~0");
    }

    #[test]
    fn push_and_pop_restore_the_path() {
        let mut path = PathBuf::new();
        path.push(&Step::Member("x"));
        path.push(&Step::Index(1234));
        assert_eq!(path.committed(), "oa:/x/1234");
        assert_eq!(path.len(), "oa:/x/1234".len());
        path.pop();
        path.push(&Step::Member("y~"));
        assert_eq!(path.committed(), "oo:/x/y~0");
        path.pop();
        path.pop();
        assert_eq!(path.committed(), ":");
        assert!(path.is_empty());
    }

    #[test]
    fn control_characters_are_category_cc() {
        assert!(has_control_character("a\u{0}"));
        assert!(has_control_character("\u{1f}"));
        assert!(has_control_character("\u{7f}"));
        assert!(has_control_character("x\u{80}"));
        assert!(has_control_character("\u{9f}"));
        assert!(!has_control_character("\u{a0}\u{2028}é "));
    }
}
