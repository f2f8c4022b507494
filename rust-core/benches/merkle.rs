//! `cargo bench --bench merkle`: a 4096-leaf root against the SHA-256 calls it needs (4096 leaf
//! hashes of 33 bytes, 4095 node hashes of 65 bytes), without Python's call overhead.

mod common;

use std::hint::black_box;

use common::time;
use recordseal_core::merkle;
use sha2::{Digest, Sha256};

fn main() {
    let leaves: Vec<[u8; 32]> = (0u32..4096)
        .map(|i| Sha256::digest(i.to_be_bytes()).into())
        .collect();
    time("merkle_root, 4096 leaves", 200, || {
        black_box(merkle::root(black_box(&leaves)));
    });
    let (leaf, node) = ([0u8; 33], [1u8; 65]);
    time("8191 SHA-256 calls, one by one (sha2)", 200, || {
        for _ in 0..4096 {
            black_box(Sha256::digest(black_box(&leaf)));
        }
        for _ in 0..4095 {
            black_box(Sha256::digest(black_box(&node)));
        }
    });
    time("inclusion_proof, 4096 leaves", 100, || {
        black_box(merkle::inclusion_proof(black_box(&leaves), 1234).unwrap());
    });
}
