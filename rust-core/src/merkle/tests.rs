use super::*;

/// RFC 6962 section 2.1 as written, for testing only.
fn reference_root(leaves: &[Vec<u8>]) -> Hash {
    match leaves.len() {
        0 => Sha256::digest(b"").into(),
        1 => leaf_hash(&leaves[0]),
        n => {
            let k = split(n);
            node_hash(&reference_root(&leaves[..k]), &reference_root(&leaves[k..]))
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn data(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("leaf {i}").into_bytes()).collect()
}

fn slices(proof: &[Hash]) -> Vec<&[u8]> {
    proof.iter().map(|node| node.as_slice()).collect()
}

#[test]
fn certificate_transparency_roots() {
    // The eight leaves and roots of the RFC 6962 test data used by Certificate Transparency.
    let leaves: Vec<Vec<u8>> = [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ]
    .iter()
    .map(|h| {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    })
    .collect();
    let roots = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ];
    for (size, expected) in roots.iter().enumerate() {
        assert_eq!(hex(&root(&leaves[..size])), *expected, "size {size}");
    }
}

#[test]
fn iterative_root_matches_the_recursive_definition() {
    for n in 0..70 {
        let leaves = data(n);
        assert_eq!(root(&leaves), reference_root(&leaves), "n={n}");
    }
}

#[test]
fn every_inclusion_proof_verifies() {
    for n in 1..34 {
        let leaves = data(n);
        let tree_root = root(&leaves);
        for index in 0..n {
            let proof = inclusion_proof(&leaves, index as u64).unwrap();
            verify_inclusion(
                &leaves[index],
                index as u64,
                n as u64,
                &slices(&proof),
                &tree_root,
            )
            .unwrap_or_else(|e| panic!("n={n} index={index}: {e}"));
        }
    }
}

#[test]
fn every_consistency_proof_verifies() {
    for n in 0..34 {
        let leaves = data(n);
        let new_root = root(&leaves);
        for m in 0..=n {
            let proof = consistency_proof(&leaves, m as u64).unwrap();
            let old_root = root(&leaves[..m]);
            verify_consistency(m as u64, n as u64, &old_root, &new_root, &slices(&proof))
                .unwrap_or_else(|e| panic!("m={m} n={n}: {e}"));
        }
    }
}

fn code<T>(result: Result<T>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(error) => error.code.as_str(),
    }
}

#[test]
fn mutated_inclusion_proofs_fail() {
    let leaves = data(13);
    let tree_root = root(&leaves);
    let proof = inclusion_proof(&leaves, 6).unwrap();
    let good = slices(&proof);
    let verify = |leaf: &[u8], index, size, proof: &[&[u8]], root: &[u8]| {
        code(verify_inclusion(leaf, index, size, proof, root))
    };
    assert_eq!(verify(&leaves[6], 6, 13, &good, &tree_root), "ok");
    assert_eq!(
        verify(&leaves[6], 13, 13, &good, &tree_root),
        "index_out_of_range"
    );
    assert_eq!(
        verify(&leaves[6], 6, 13, &good[1..], &tree_root),
        "proof_invalid"
    );
    let mut longer = good.clone();
    longer.push(&tree_root);
    assert_eq!(
        verify(&leaves[6], 6, 13, &longer, &tree_root),
        "proof_invalid"
    );
    let short_node = [0u8; 31];
    let mut bad_node = good.clone();
    bad_node[0] = &short_node;
    assert_eq!(
        verify(&leaves[6], 6, 13, &bad_node, &tree_root),
        "proof_invalid"
    );
    let mut flipped = proof.clone();
    flipped[1][0] ^= 1;
    assert_eq!(
        verify(&leaves[6], 6, 13, &slices(&flipped), &tree_root),
        "root_mismatch"
    );
    assert_eq!(
        verify(&leaves[7], 6, 13, &good, &tree_root),
        "root_mismatch"
    );
    assert_eq!(
        verify(&leaves[6], 7, 13, &good, &tree_root),
        "root_mismatch"
    );
    assert_eq!(verify(&leaves[6], 6, 8, &good, &tree_root), "proof_invalid");
    assert_eq!(
        verify(&leaves[6], 6, 13, &good, &tree_root[..31]),
        "root_mismatch"
    );
}

#[test]
fn mutated_consistency_proofs_fail() {
    let leaves = data(13);
    let (old_root, new_root) = (root(&leaves[..6]), root(&leaves));
    let proof = consistency_proof(&leaves, 6).unwrap();
    let good = slices(&proof);
    let verify = |old, new, old_root: &[u8], new_root: &[u8], proof: &[&[u8]]| {
        code(verify_consistency(old, new, old_root, new_root, proof))
    };
    assert_eq!(verify(6, 13, &old_root, &new_root, &good), "ok");
    assert_eq!(verify(14, 13, &old_root, &new_root, &good), "size_invalid");
    assert_eq!(verify(6, 13, &new_root, &old_root, &good), "root_mismatch");
    assert_eq!(
        verify(6, 13, &old_root, &new_root, &good[1..]),
        "proof_invalid"
    );
    assert_eq!(verify(6, 13, &old_root, &new_root, &[]), "proof_invalid");
    let mut flipped = proof.clone();
    flipped[0][31] ^= 0x80;
    assert_eq!(
        verify(6, 13, &old_root, &new_root, &slices(&flipped)),
        "root_mismatch"
    );
    assert_eq!(verify(0, 13, &old_root, &new_root, &[]), "ok");
    assert_eq!(verify(0, 13, &old_root, &new_root, &good), "proof_invalid");
    assert_eq!(verify(0, 0, &old_root, &new_root, &[]), "ok");
    assert_eq!(verify(13, 13, &new_root, &new_root, &[]), "ok");
    assert_eq!(verify(13, 13, &old_root, &new_root, &[]), "root_mismatch");
    assert_eq!(verify(13, 13, &new_root, &new_root, &good), "proof_invalid");
    // A power-of-two old tree is seeded by its own root.
    let proof = consistency_proof(&leaves, 4).unwrap();
    let old_root = root(&leaves[..4]);
    assert_eq!(verify(4, 13, &old_root, &new_root, &slices(&proof)), "ok");
    assert_eq!(
        verify(4, 13, &old_root[..31], &new_root, &slices(&proof)),
        "root_mismatch"
    );
}

#[test]
fn argument_ranges() {
    let leaves = data(3);
    assert_eq!(code(inclusion_proof(&leaves, 3)), "index_out_of_range");
    assert_eq!(code(inclusion_proof(&data(0), 0)), "index_out_of_range");
    assert_eq!(code(consistency_proof(&leaves, 4)), "size_invalid");
    assert!(consistency_proof(&leaves, 3).unwrap().is_empty());
    assert!(consistency_proof(&leaves, 0).unwrap().is_empty());
    assert!(inclusion_proof(&data(1), 0).unwrap().is_empty());
}
