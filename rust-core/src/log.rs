//! An append-only RFC 6962 log kept as the hashes of its complete subtrees (DESIGN.md section
//! 4, docs/records.md "Sealing"). Node `(level, index)` covers leaves
//! `[index * 2^level, (index + 1) * 2^level)`. A seal reads the log's frontier, appends the
//! pending leaf hashes and stores the nodes they complete. The readable reference is
//! `recordseal.merkle.tree` (`nodes_completed_by_append`, `root`) with `merkle.log.grow_log`.

use sha2::{Digest, Sha256};

use crate::merkle::node_hash;
use crate::sha256::Hash;

/// A node that an append completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    pub level: u32,
    pub index: u64,
    pub hash: Hash,
}

/// What appending leaves adds to a log: the completed nodes, in the order they complete,
/// and the root of the grown log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Growth {
    pub nodes: Vec<Node>,
    pub root: Hash,
}

/// The complete subtrees of a log of `size` leaves, `(level, index)` from left to right (the
/// highest level first): one per bit set in `size`.
pub fn frontier(size: u64) -> impl Iterator<Item = (u32, u64)> {
    (0..u64::BITS)
        .rev()
        .filter(move |level| size >> level & 1 == 1)
        .map(move |level| (level, (size >> level) - 1))
}

/// Appends `leaf_hashes` to a log of `size` leaves whose [`frontier`] nodes hash to
/// `frontier`, in that order. Precondition: `frontier.len() == size.count_ones()` and
/// `size + leaf_hashes.len()` fits a u64.
pub fn grow(size: u64, frontier: Vec<Hash>, leaf_hashes: &[Hash]) -> Growth {
    debug_assert_eq!(frontier.len(), size.count_ones() as usize);
    // The frontier as a stack: the lowest level on top. Appending leaf `size` merges it with
    // one stacked subtree per trailing one bit of `size`, the nodes it completes.
    let mut stack = frontier;
    let mut nodes = Vec::with_capacity(2 * leaf_hashes.len() + 1);
    for (index, leaf) in (size..).zip(leaf_hashes) {
        let (mut level, mut index, mut hash) = (0, index, *leaf);
        nodes.push(Node { level, index, hash });
        while index & 1 == 1 {
            let left = stack
                .pop()
                .expect("a complete left sibling per trailing one bit");
            hash = node_hash(&left, &hash);
            (level, index) = (level + 1, index >> 1);
            nodes.push(Node { level, index, hash });
        }
        stack.push(hash);
    }
    Growth {
        nodes,
        root: root(&stack),
    }
}

/// MTH of a log from its frontier (left to right): RFC 6962 splits at the largest power of
/// two, which is the leftmost complete subtree, so the root folds in from the right.
pub fn root(frontier: &[Hash]) -> Hash {
    frontier
        .iter()
        .rev()
        .copied()
        .reduce(|right, left| node_hash(&left, &right))
        .unwrap_or_else(|| Sha256::digest(b"").into())
}

#[cfg(test)]
mod tests;
