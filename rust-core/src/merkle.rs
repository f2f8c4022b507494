//! RFC 6962 Merkle trees: roots and proofs (section 2.1), verified as RFC 9162 2.1.3.2 and
//! 2.1.4.2 (docs/spec.md section 5).

use sha2::{Digest, Sha256};

use crate::error::{Code, Error, Result};
use crate::sha256::Hash;
use crate::sha256::{self, Block, Message, Scratch};

pub fn leaf_hash(data: &[u8]) -> Hash {
    Sha256::new_with_prefix([0u8])
        .chain_update(data)
        .finalize()
        .into()
}

pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    sha256::digest_blocks(&node_blocks(left, right))
}

fn node_blocks(left: &Hash, right: &Hash) -> [Block; 2] {
    sha256::padded(0, &[&[1], left, right])
}

/// MTH over leaf data.
pub fn root<L: AsRef<[u8]>>(leaves: &[L]) -> Hash {
    root_of_leaf_hashes(leaf_hashes(leaves))
}

/// Leaf hashes, two leaves at a time (see `sha256`).
pub fn leaf_hashes<L: AsRef<[u8]>>(leaves: &[L]) -> Vec<Hash> {
    let mut scratch = Scratch::default();
    let mut hashes = Vec::with_capacity(leaves.len());
    for pair in leaves.chunks(2) {
        let [a, b] = pair else {
            hashes.push(leaf_hash(pair[0].as_ref()));
            continue;
        };
        let (a, b) = (a.as_ref(), b.as_ref());
        // Leaves of up to 54 bytes (commitments among them) fit one block: pad on the stack.
        let (x, y) = if a.len() <= 54 && b.len() <= 54 {
            let blocks: [[Block; 1]; 2] =
                [sha256::padded(0, &[&[0], a]), sha256::padded(0, &[&[0], b])];
            sha256::digest_blocks_pair(&blocks[0], &blocks[1])
        } else {
            let (parts_a, parts_b): ([&[u8]; 2], [&[u8]; 2]) = ([&[0], a], [&[0], b]);
            sha256::digest_pair(
                &Message::new(&parts_a),
                &Message::new(&parts_b),
                &mut scratch,
            )
        };
        hashes.extend([x, y]);
    }
    hashes
}

/// MTH from leaf hashes, reduced in place level by level. Pairing neighbours and carrying an
/// odd last node up unchanged splits every level exactly where RFC 6962's largest power of
/// two does. The nodes of a level are independent, so they are hashed two at a time.
pub fn root_of_leaf_hashes(mut level: Vec<Hash>) -> Hash {
    if level.is_empty() {
        return Sha256::digest(b"").into();
    }
    let mut len = level.len();
    while len > 1 {
        let parents = len / 2;
        let mut i = 0;
        // Parents i and i + 1 read children 2i..2i+4, never below i + 2: in place is safe.
        while i + 1 < parents {
            let first = node_blocks(&level[2 * i], &level[2 * i + 1]);
            let second = node_blocks(&level[2 * i + 2], &level[2 * i + 3]);
            (level[i], level[i + 1]) = sha256::digest_blocks_pair(&first, &second);
            i += 2;
        }
        if i < parents {
            level[i] = node_hash(&level[2 * i], &level[2 * i + 1]);
        }
        if len % 2 == 1 {
            level[parents] = level[len - 1];
        }
        len = len.div_ceil(2);
    }
    level[0]
}

fn subtree_root(hashes: &[Hash]) -> Hash {
    root_of_leaf_hashes(hashes.to_vec())
}

/// Largest power of two strictly below `n` (n ≥ 2).
fn split(n: usize) -> usize {
    1 << (usize::BITS - 1 - (n - 1).leading_zeros())
}

/// PATH(m, D[n]), nodes from the leaf upwards.
pub fn inclusion_proof<L: AsRef<[u8]>>(leaves: &[L], index: u64) -> Result<Vec<Hash>> {
    let index = usize::try_from(index)
        .ok()
        .filter(|&i| i < leaves.len())
        .ok_or_else(|| {
            Error::new(
                Code::IndexOutOfRange,
                "the index must lie in 0..len(leaves)",
            )
        })?;
    let hashes = leaf_hashes(leaves);
    let mut proof = Vec::new();
    audit_path(index, &hashes, &mut proof);
    Ok(proof)
}

fn audit_path(m: usize, hashes: &[Hash], proof: &mut Vec<Hash>) {
    let n = hashes.len();
    if n <= 1 {
        return;
    }
    let k = split(n);
    if m < k {
        audit_path(m, &hashes[..k], proof);
        proof.push(subtree_root(&hashes[k..]));
    } else {
        audit_path(m - k, &hashes[k..], proof);
        proof.push(subtree_root(&hashes[..k]));
    }
}

/// PROOF(m, D[n]); empty when `old_size` is 0 or n.
pub fn consistency_proof<L: AsRef<[u8]>>(leaves: &[L], old_size: u64) -> Result<Vec<Hash>> {
    let m = usize::try_from(old_size)
        .ok()
        .filter(|&m| m <= leaves.len())
        .ok_or_else(|| Error::new(Code::SizeInvalid, "old_size must lie in 0..=len(leaves)"))?;
    let mut proof = Vec::new();
    if m > 0 && m < leaves.len() {
        subproof(m, &leaf_hashes(leaves), true, &mut proof);
    }
    Ok(proof)
}

fn subproof(m: usize, hashes: &[Hash], complete: bool, proof: &mut Vec<Hash>) {
    let n = hashes.len();
    if m == n {
        if !complete {
            proof.push(subtree_root(hashes));
        }
        return;
    }
    let k = split(n);
    if m <= k {
        subproof(m, &hashes[..k], complete, proof);
        proof.push(subtree_root(&hashes[k..]));
    } else {
        subproof(m - k, &hashes[k..], false, proof);
        proof.push(subtree_root(&hashes[..k]));
    }
}

/// Checks that `proof` places `leaf` (its data) at `index` of a tree of `size` under `root`.
pub fn verify_inclusion(
    leaf: &[u8],
    index: u64,
    size: u64,
    proof: &[&[u8]],
    root: &[u8],
) -> Result<()> {
    if index >= size {
        return Err(Error::new(
            Code::IndexOutOfRange,
            "the index must be below the tree size",
        ));
    }
    let (inner, border) = decompose(index, size);
    let proof = nodes(proof, inner + border)?;
    let hash = chain_inner(leaf_hash(leaf), &proof[..inner], index);
    let hash = chain_border_right(hash, &proof[inner..]);
    expect_root(root, &hash, "root")
}

/// Checks that the tree of `old_size` leaves under `old_root` is a prefix of the one of
/// `new_size` leaves under `new_root`.
pub fn verify_consistency(
    old_size: u64,
    new_size: u64,
    old_root: &[u8],
    new_root: &[u8],
    proof: &[&[u8]],
) -> Result<()> {
    if old_size > new_size {
        return Err(Error::new(
            Code::SizeInvalid,
            "old_size must not exceed new_size",
        ));
    }
    // Checked before equal sizes, as the spec lists it: with (0, 0) any roots pass.
    if old_size == 0 {
        // Every tree extends the empty tree.
        nodes(proof, 0)?;
        return Ok(());
    }
    if old_size == new_size {
        nodes(proof, 0)?;
        return expect_root(new_root, old_root, "new root");
    }
    // The proof is the suffix of an inclusion proof for leaf old_size-1, from the level of the
    // largest complete subtree the old tree ends with; that subtree's root seeds the chain.
    let (inner, border) = decompose(old_size - 1, new_size);
    let shift = old_size.trailing_zeros() as usize;
    let inner = inner - shift;
    let seeded_by_old_root = old_size == 1 << shift;
    let start = usize::from(!seeded_by_old_root);
    let proof = nodes(proof, start + inner + border)?;
    let seed = if seeded_by_old_root {
        to_hash(old_root).ok_or_else(|| root_mismatch("old root", old_root, &[]))?
    } else {
        proof[0]
    };
    let proof = &proof[start..];
    let mask = (old_size - 1) >> shift;
    let old = chain_inner_right(seed, &proof[..inner], mask);
    let old = chain_border_right(old, &proof[inner..]);
    expect_root(old_root, &old, "old root")?;
    let new = chain_inner(seed, &proof[..inner], mask);
    let new = chain_border_right(new, &proof[inner..]);
    expect_root(new_root, &new, "new root")
}

/// Sizes of the inner (below the border) and border parts of an inclusion proof.
fn decompose(index: u64, size: u64) -> (usize, usize) {
    let inner = (u64::BITS - (index ^ (size - 1)).leading_zeros()) as usize;
    let border = (index >> inner).count_ones() as usize;
    (inner, border)
}

fn nodes(proof: &[&[u8]], expected: usize) -> Result<Vec<Hash>> {
    if proof.len() != expected {
        return Err(Error::new(
            Code::ProofInvalid,
            format!(
                "the proof has {} nodes where {expected} are needed",
                proof.len()
            ),
        ));
    }
    proof
        .iter()
        .map(|node| to_hash(node))
        .collect::<Option<Vec<Hash>>>()
        .ok_or_else(|| Error::new(Code::ProofInvalid, "every proof node must be 32 bytes"))
}

fn to_hash(bytes: &[u8]) -> Option<Hash> {
    bytes.try_into().ok()
}

fn chain_inner(mut hash: Hash, proof: &[Hash], index: u64) -> Hash {
    for (level, node) in proof.iter().enumerate() {
        hash = if (index >> level) & 1 == 0 {
            node_hash(&hash, node)
        } else {
            node_hash(node, &hash)
        };
    }
    hash
}

fn chain_inner_right(mut hash: Hash, proof: &[Hash], index: u64) -> Hash {
    for (level, node) in proof.iter().enumerate() {
        if (index >> level) & 1 == 1 {
            hash = node_hash(node, &hash);
        }
    }
    hash
}

fn chain_border_right(mut hash: Hash, proof: &[Hash]) -> Hash {
    for node in proof {
        hash = node_hash(node, &hash);
    }
    hash
}

fn expect_root(expected: &[u8], computed: &[u8], which: &str) -> Result<()> {
    if expected == computed {
        Ok(())
    } else {
        Err(root_mismatch(which, expected, computed))
    }
}

fn root_mismatch(which: &str, expected: &[u8], computed: &[u8]) -> Error {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    Error::new(
        Code::RootMismatch,
        format!(
            "the proof does not reproduce the {which}: expected {}, computed {}",
            hex(expected),
            hex(computed)
        ),
    )
}

#[cfg(test)]
mod tests;
