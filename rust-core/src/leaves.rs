//! Committing a record (docs/spec.md sections 2 and 6): walk the parsed payload in canonical
//! order, check and encode every leaf, then salt, commit and build the Merkle root.

use crate::commitment::{Committed, FieldHasher, Hash};
use crate::declarations::{Cursor, Declarations};
use crate::error::{Code, Error, Result};
use crate::jcs;
use crate::json::{self, Node};
use crate::kinds::{self, Kind, Value};
use crate::merkle;
use crate::path::{has_control_character, PathBuf, Step};

pub const MAX_PAYLOAD_LEN: usize = 262_144;
pub const MAX_FIELDS: usize = 4096;
pub const MAX_PATH_LEN: usize = 512;

/// One committed field, borrowed from its record.
#[derive(Clone, Copy, Debug)]
pub struct Leaf<'r> {
    pub path: &'r str,
    pub kind: Kind,
    pub encoded: &'r [u8],
    pub salt: Hash,
    pub commitment: Hash,
}

/// Paths and encodings live in two shared buffers; a leaf keeps offsets into them, so a
/// record of n fields costs a handful of allocations rather than 2n.
#[derive(Clone, Copy, Debug)]
struct LeafEntry {
    path: (u32, u32),
    encoded: (u32, u32),
    kind: Kind,
}

#[derive(Debug)]
pub struct CommittedRecord {
    pub canonical: Vec<u8>,
    pub root: Hash,
    paths: String,
    encodings: Vec<u8>,
    /// In the UTF-8 order of their paths.
    leaves: Vec<LeafEntry>,
    /// Salt and commitment of each leaf.
    committed: Vec<Committed>,
}

impl CommittedRecord {
    pub fn field_count(&self) -> usize {
        self.leaves.len()
    }

    /// Leaves in the UTF-8 order of their paths.
    pub fn leaves(&self) -> impl ExactSizeIterator<Item = Leaf<'_>> + '_ {
        (0..self.leaves.len()).map(|i| self.leaf(i))
    }

    pub fn leaf(&self, index: usize) -> Leaf<'_> {
        let entry = &self.leaves[index];
        let (salt, commitment) = self.committed[index];
        Leaf {
            path: &self.paths[entry.path.0 as usize..entry.path.1 as usize],
            kind: entry.kind,
            encoded: &self.encodings[entry.encoded.0 as usize..entry.encoded.1 as usize],
            salt,
            commitment,
        }
    }
}

/// Parses, checks and commits one payload, in the order of checks of spec section 6.2.
pub fn commit_record(
    payload: &[u8],
    declarations: &[(&str, &str)],
    strict: bool,
    salt_key: &[u8],
    record_id: &str,
) -> Result<CommittedRecord> {
    check_payload_len(payload.len())?;
    let declarations = Declarations::new(declarations)?;
    commit_declared(payload, &declarations, strict, salt_key, record_id)
}

/// `commit_record` with declarations already checked (spec 6.2 step 2 onwards).
pub fn commit_declared(
    payload: &[u8],
    declarations: &Declarations<'_>,
    strict: bool,
    salt_key: &[u8],
    record_id: &str,
) -> Result<CommittedRecord> {
    check_payload_len(payload.len())?;
    // Checks the salt key, then the record id.
    let hasher = FieldHasher::new(salt_key, record_id)?;
    let payload_tree = json::parse(payload)?;
    let (walker, canonical) = walk(&payload_tree, declarations, strict, payload.len())?;
    // The tree is done with: its memory serves the hashing that follows.
    drop(payload_tree);
    Ok(walker.finish(canonical, &hasher))
}

/// `commit_declared` of a payload parsed already (by the request's reader, src/request.rs):
/// the same checks in the same order, the text's size given as `payload_len` when it was
/// measured (`None`: it cannot exceed the limit).
pub fn commit_tree(
    payload: &Node<'_>,
    payload_len: Option<usize>,
    declarations: &Declarations<'_>,
    strict: bool,
    salt_key: &[u8],
    record_id: &str,
) -> Result<CommittedRecord> {
    if let Some(len) = payload_len {
        check_payload_len(len)?;
    }
    let hasher = FieldHasher::new(salt_key, record_id)?;
    let capacity = payload_len.unwrap_or(1024);
    let (walker, canonical) = walk(payload, declarations, strict, capacity)?;
    Ok(walker.finish(canonical, &hasher))
}

/// The payload's object checks and its walk (spec 6.2 steps 4 and 5), and its canonical form.
fn walk<'d>(
    payload_tree: &Node<'_>,
    declarations: &'d Declarations<'d>,
    strict: bool,
    capacity: usize,
) -> Result<(Walker<'d>, Vec<u8>)> {
    match payload_tree {
        Node::Obj(members) if members.is_empty() => {
            return Err(Error::new(
                Code::PayloadEmpty,
                "the payload object has no member",
            ))
        }
        Node::Obj(_) => {}
        _ => {
            return Err(Error::new(
                Code::PayloadNotObject,
                "the payload must be a JSON object",
            ))
        }
    }
    let mut walker = Walker::new(declarations, strict, capacity);
    walker.walk(payload_tree, Some(Declarations::ROOT), false)?;
    let mut canonical = Vec::with_capacity(capacity + 16);
    jcs::write(payload_tree, &mut canonical);
    Ok((walker, canonical))
}

pub fn check_payload_len(len: usize) -> Result<()> {
    if len > MAX_PAYLOAD_LEN {
        return Err(Error::new(
            Code::PayloadTooLarge,
            format!("the payload exceeds {MAX_PAYLOAD_LEN} bytes"),
        ));
    }
    Ok(())
}

struct Walker<'d> {
    declarations: &'d Declarations<'d>,
    strict: bool,
    path: PathBuf,
    paths: String,
    encodings: Vec<u8>,
    leaves: Vec<LeafEntry>,
}

impl<'d> Walker<'d> {
    fn new(declarations: &'d Declarations<'d>, strict: bool, payload_len: usize) -> Self {
        Walker {
            declarations,
            strict,
            path: PathBuf::new(),
            paths: String::with_capacity(payload_len),
            encodings: Vec::with_capacity(payload_len),
            leaves: Vec::with_capacity(32),
        }
    }

    fn fault(&self, code: Code, message: impl Into<String>) -> Error {
        Error::new(code, message).with_field(self.path.committed())
    }

    /// Checks of spec 6.2 step 5 at one value, each value before its children. The caller
    /// has pushed the value's step and checked its member name for control characters.
    fn walk(&mut self, node: &Node<'_>, at: Option<Cursor>, free_above: bool) -> Result<()> {
        if self.path.len() > MAX_PATH_LEN {
            return Err(self.fault(
                Code::PathTooLong,
                format!("the committed path exceeds {MAX_PATH_LEN} bytes"),
            ));
        }
        let kind = at.and_then(|at| self.declarations.kind(at));
        if node.is_leaf() {
            return self.leaf(node, kind, free_above);
        }
        if matches!(kind, Some(kind) if kind != Kind::Free) {
            return Err(self.fault(
                Code::ValueType,
                "a path declared with a kind other than free holds a non-empty object or array",
            ));
        }
        let free_above = free_above || kind == Some(Kind::Free);
        match node {
            Node::Arr(items) => {
                let child = at.and_then(|at| self.declarations.element(at));
                for (index, item) in items.iter().enumerate() {
                    self.path.push(&Step::Index(index));
                    self.walk(item, child, free_above)?;
                    self.path.pop();
                }
            }
            Node::Obj(members) => {
                for member in members {
                    self.path.push(&Step::Member(&member.name));
                    if has_control_character(&member.name) {
                        return Err(self.fault(
                            Code::ControlCharacter,
                            "a member name holds a control character (Unicode category Cc)",
                        ));
                    }
                    let child = at.and_then(|at| self.declarations.member(at, &member.name));
                    self.walk(&member.value, child, free_above)?;
                    self.path.pop();
                }
            }
            _ => unreachable!("scalars are leaves"),
        }
        Ok(())
    }

    fn leaf(&mut self, node: &Node<'_>, kind: Option<Kind>, free_above: bool) -> Result<()> {
        if self.leaves.len() == MAX_FIELDS {
            return Err(Error::new(
                Code::TooManyFields,
                format!("the payload has more than {MAX_FIELDS} fields"),
            ));
        }
        if self.strict && !free_above && kind.is_none() {
            return Err(self.fault(
                Code::UndeclaredField,
                "the stream is strict and no declaration covers this field",
            ));
        }
        let kind = kind.unwrap_or(Kind::Free);
        let encoded_start = self.encodings.len();
        if let Err(error) = kinds::encode(kind, Value::of(node), &mut self.encodings) {
            return Err(error.with_field(self.path.committed()));
        }
        let path_start = self.paths.len();
        self.path.write_to(&mut self.paths);
        self.leaves.push(LeafEntry {
            path: (path_start as u32, self.paths.len() as u32),
            encoded: (encoded_start as u32, self.encodings.len() as u32),
            kind,
        });
        Ok(())
    }

    fn finish(self, canonical: Vec<u8>, hasher: &FieldHasher) -> CommittedRecord {
        let Walker {
            paths,
            encodings,
            leaves: walked,
            ..
        } = self;
        let path_of =
            |entry: &LeafEntry| &paths.as_bytes()[entry.path.0 as usize..entry.path.1 as usize];
        // Most paths differ in their first eight bytes: compare those as one integer first.
        // Paths hold no U+0000 (member names are free of control characters), so zero padding
        // sorts a shorter path first, as byte order does.
        let prefix = |entry: &LeafEntry| {
            let mut head = [0u8; 8];
            let path = path_of(entry);
            let len = path.len().min(8);
            head[..len].copy_from_slice(&path[..len]);
            u64::from_be_bytes(head)
        };
        let mut order: Vec<(u64, u32)> = walked
            .iter()
            .enumerate()
            .map(|(i, entry)| (prefix(entry), i as u32))
            .collect();
        order.sort_unstable_by(|&(key_a, a), &(key_b, b)| {
            let path = |i: u32| path_of(&walked[i as usize]);
            key_a.cmp(&key_b).then_with(|| path(a).cmp(path(b)))
        });
        let leaves: Vec<LeafEntry> = order.iter().map(|&(_, i)| walked[i as usize]).collect();
        drop((order, walked));
        let committed = hasher.commit_fields(leaves.len(), |i| {
            let entry = &leaves[i];
            let path = &paths[entry.path.0 as usize..entry.path.1 as usize];
            (
                path,
                &encodings[entry.encoded.0 as usize..entry.encoded.1 as usize],
            )
        });
        let commitments: Vec<&[u8]> = committed.iter().map(|(_, c)| c.as_slice()).collect();
        let root = merkle::root(&commitments);
        drop(commitments);
        CommittedRecord {
            canonical,
            root,
            paths,
            encodings,
            leaves,
            committed,
        }
    }
}

#[cfg(test)]
mod tests;
