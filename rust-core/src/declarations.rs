//! Declarations: path patterns mapped to kinds (docs/spec.md section 6.1).
//!
//! Patterns are stored as a trie of steps, so the walk over a payload finds the declaration
//! of each value by one lookup from its parent's trie node instead of matching every pattern.
//! Declarations are given with every record, so building them borrows the pattern text and
//! allocates only the two tables of the trie.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::error::{Code, Error, Result};
use crate::kinds::Kind;
use crate::path::has_control_character;

/// Longest pattern text accepted, in bytes (the longest committed path).
pub const MAX_PATTERN_LEN: usize = 512;

/// A position in the trie: the patterns that match the path walked so far.
pub type Cursor = u32;

#[derive(Clone, Copy, Default)]
struct TrieNode {
    kind: Option<Kind>,
    element: Option<Cursor>,
    /// This node's member steps: a range of `Declarations::edges`.
    members: (u32, u32),
}

/// A member step. Edges are sorted by parent, then by name length and bytes: any total order
/// serves a binary search, and this one settles most comparisons on the length.
struct Edge<'a> {
    parent: Cursor,
    name: Cow<'a, str>,
    child: Cursor,
}

fn name_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

pub struct Declarations<'a> {
    nodes: Vec<TrieNode>,
    edges: Vec<Edge<'a>>,
}

impl<'a> Declarations<'a> {
    pub const ROOT: Cursor = 0;

    pub fn empty() -> Self {
        Declarations {
            nodes: vec![TrieNode::default()],
            edges: Vec::new(),
        }
    }

    /// Validates and stores `(pattern, kind)` pairs. A fault is reported for the first faulty
    /// pattern in UTF-8 order, with the pattern as `field`.
    pub fn new(pairs: &[(&'a str, &str)]) -> Result<Self> {
        let mut declarations = Declarations::empty();
        declarations.nodes.reserve(pairs.len() * 2);
        declarations.edges.reserve(pairs.len() * 2);
        for &(pattern, kind) in pairs {
            if declarations.insert(pattern, kind).is_err() {
                return Err(first_fault(pairs));
            }
        }
        let mut start = 0;
        while start < declarations.edges.len() {
            let parent = declarations.edges[start].parent;
            let end = start
                + declarations.edges[start..]
                    .iter()
                    .take_while(|edge| edge.parent == parent)
                    .count();
            declarations.nodes[parent as usize].members = (start as u32, end as u32);
            start = end;
        }
        Ok(declarations)
    }

    /// A copy that borrows nothing, to be kept beyond the pattern text.
    pub fn into_owned(self) -> Declarations<'static> {
        let edges = self.edges.into_iter().map(|edge| Edge {
            parent: edge.parent,
            name: Cow::Owned(edge.name.into_owned()),
            child: edge.child,
        });
        Declarations {
            nodes: self.nodes,
            edges: edges.collect(),
        }
    }

    pub fn kind(&self, at: Cursor) -> Option<Kind> {
        self.nodes[at as usize].kind
    }

    pub fn member(&self, at: Cursor, name: &str) -> Option<Cursor> {
        let (start, end) = self.nodes[at as usize].members;
        let edges = &self.edges[start as usize..end as usize];
        let found = edges.binary_search_by(|edge| name_order(&edge.name, name));
        found.ok().map(|i| edges[i].child)
    }

    pub fn element(&self, at: Cursor) -> Option<Cursor> {
        self.nodes[at as usize].element
    }

    /// Checks one pattern and adds its steps to the trie as they are read. On a fault the
    /// trie may hold part of the pattern; it is then dropped.
    fn insert(&mut self, pattern: &'a str, kind: &str) -> Result<()> {
        let invalid = || invalid(pattern);
        if pattern.len() > MAX_PATTERN_LEN {
            return Err(invalid());
        }
        let (vector, pointer) = pattern.split_once(':').ok_or_else(invalid)?;
        let mut tokens = pointer.strip_prefix('/').ok_or_else(invalid)?.split('/');
        if vector.is_empty() {
            return Err(invalid());
        }
        let mut at = Self::ROOT;
        for step in vector.bytes() {
            let token = tokens.next().ok_or_else(invalid)?;
            at = match step {
                b'a' if token == "*" => self.element_child(at),
                b'o' => self.member_child(at, unescape_token(token).ok_or_else(invalid)?),
                _ => return Err(invalid()),
            };
        }
        if tokens.next().is_some() {
            return Err(invalid());
        }
        let kind = Kind::from_name(kind).map_err(|e| e.with_field(pattern))?;
        self.nodes[at as usize].kind = Some(kind);
        Ok(())
    }

    fn new_node(&mut self) -> Cursor {
        self.nodes.push(TrieNode::default());
        (self.nodes.len() - 1) as Cursor
    }

    fn element_child(&mut self, at: Cursor) -> Cursor {
        match self.nodes[at as usize].element {
            Some(child) => child,
            None => {
                let child = self.new_node();
                self.nodes[at as usize].element = Some(child);
                child
            }
        }
    }

    fn member_child(&mut self, at: Cursor, name: Cow<'a, str>) -> Cursor {
        let found = self.edges.binary_search_by(|edge| {
            edge.parent
                .cmp(&at)
                .then_with(|| name_order(&edge.name, &name))
        });
        match found {
            Ok(i) => self.edges[i].child,
            Err(i) => {
                let child = self.new_node();
                let edge = Edge {
                    parent: at,
                    name,
                    child,
                };
                self.edges.insert(i, edge);
                child
            }
        }
    }
}

/// Checks one declaration alone.
pub fn check(pattern: &str, kind: &str) -> Result<()> {
    Declarations::empty().insert(pattern, kind)
}

/// The fault of the first faulty pattern in UTF-8 order; only called when there is one.
fn first_fault(pairs: &[(&str, &str)]) -> Error {
    let mut sorted = pairs.to_vec();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    sorted
        .into_iter()
        .find_map(|(pattern, kind)| check(pattern, kind).err())
        .unwrap_or_else(|| invalid(""))
}

fn invalid(pattern: &str) -> Error {
    Error::new(
        Code::DeclarationInvalid,
        "a pattern is a committed path whose array steps are all *, at most 512 bytes, with \
         escaped member names free of control characters",
    )
    .with_field(pattern)
}

/// RFC 6901 token to member name; `None` for a bare `~` or a control character.
fn unescape_token(token: &str) -> Option<Cow<'_, str>> {
    if has_control_character(token) {
        return None;
    }
    if !token.contains('~') {
        return Some(Cow::Borrowed(token));
    }
    let mut name = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        match c {
            '~' => match chars.next() {
                Some('0') => name.push('~'),
                Some('1') => name.push('/'),
                _ => return None,
            },
            _ => name.push(c),
        }
    }
    Some(Cow::Owned(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(pairs: &[(&str, &str)]) -> (&'static str, Option<String>) {
        match Declarations::new(pairs) {
            Ok(_) => ("ok", None),
            Err(error) => (error.code.as_str(), error.field),
        }
    }

    #[test]
    fn valid_patterns() {
        let long = format!("o:/{}", "x".repeat(MAX_PATTERN_LEN - 3));
        for pattern in [
            "o:/a",
            "o:/",
            "oao:/a/*/b",
            "o:/*",
            "oo:/~0~1/",
            "a:/*",
            "aa:/*/*",
            "o:/é€",
            long.as_str(),
        ] {
            assert_eq!(fault(&[(pattern, "free")]), ("ok", None), "{pattern}");
        }
    }

    #[test]
    fn invalid_patterns() {
        let long = format!("o:/{}", "x".repeat(MAX_PATTERN_LEN - 2));
        for pattern in [
            "",
            ":",
            "o",
            "o:",
            "o:a",
            ":/a",
            "oo:/a",
            "o:/a/b",
            "a:/0",
            "a:/",
            "x:/a",
            "O:/a",
            "o:/~",
            "o:/~2",
            "o:/a~",
            "o:/\u{1}",
            "o:/\u{85}",
            "o:/a\u{7f}",
            "oa:/a/1",
            " o:/a",
            "o;/a",
            long.as_str(),
        ] {
            let expected = ("declaration_invalid", Some(pattern.to_string()));
            assert_eq!(fault(&[(pattern, "free")]), expected, "{pattern:?}");
        }
    }

    #[test]
    fn patterns_are_checked_in_utf8_order() {
        let pairs = [("o:/b", "nope"), ("o:/c", "free"), ("o:/a~", "free")];
        assert_eq!(fault(&pairs), ("declaration_invalid", Some("o:/a~".into())));
        let pairs = [("o:/b", "free"), ("o:/é", "text"), ("o:/a", "nope")];
        assert_eq!(fault(&pairs), ("unknown_kind", Some("o:/a".into())));
        assert_eq!(
            fault(&[("bad", "nope")]),
            ("declaration_invalid", Some("bad".into()))
        );
        let pairs = [("o:/é", "nope"), ("o:/z", "free")];
        assert_eq!(fault(&pairs), ("unknown_kind", Some("o:/é".into())));
    }

    #[test]
    fn lookups_follow_the_trie() {
        let declarations = Declarations::new(&[
            ("oao:/items/*/qty", "integer"),
            ("o:/items", "free"),
            ("oo:/a~1b/~0", "text"),
            ("o:/*", "money"),
        ])
        .unwrap();
        let items = declarations.member(Declarations::ROOT, "items").unwrap();
        assert_eq!(declarations.kind(items), Some(Kind::Free));
        let element = declarations.element(items).unwrap();
        assert_eq!(declarations.kind(element), None);
        let qty = declarations.member(element, "qty").unwrap();
        assert_eq!(declarations.kind(qty), Some(Kind::Integer));
        let ab = declarations.member(Declarations::ROOT, "a/b").unwrap();
        let tilde = declarations.member(ab, "~").unwrap();
        assert_eq!(declarations.kind(tilde), Some(Kind::Text));
        let star = declarations.member(Declarations::ROOT, "*").unwrap();
        assert_eq!(declarations.kind(star), Some(Kind::Money));
        assert_eq!(declarations.member(Declarations::ROOT, "other"), None);
        assert_eq!(declarations.member(items, "qty"), None);
        assert_eq!(declarations.element(Declarations::ROOT), None);
    }
}
