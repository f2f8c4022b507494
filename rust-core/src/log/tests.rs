use super::*;
use crate::merkle;

fn data(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("leaf {i}").into_bytes()).collect()
}

/// Grows a log from empty in batches of the given sizes, keeping every node it creates.
fn grow_in_batches(leaves: &[Vec<u8>], batches: &[usize]) -> (Vec<Node>, Hash) {
    let hashes = merkle::leaf_hashes(leaves);
    let mut stored: Vec<Node> = Vec::new();
    let (mut size, mut last_root) = (0u64, root(&[]));
    for &batch in batches {
        let end = (size as usize + batch).min(hashes.len());
        let lookup = |(level, index)| {
            stored
                .iter()
                .find(|node| (node.level, node.index) == (level, index))
                .expect("a stored frontier node")
                .hash
        };
        let growth = grow(
            size,
            frontier(size).map(lookup).collect(),
            &hashes[size as usize..end],
        );
        assert_eq!(growth.root, merkle::root(&leaves[..end]), "size {end}");
        stored.extend(growth.nodes);
        (size, last_root) = (end as u64, growth.root);
    }
    (stored, last_root)
}

#[test]
fn roots_match_merkle_root_of_the_same_leaves() {
    let leaves = data(300);
    for batches in [
        vec![300],
        vec![1; 300],
        vec![1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 69],
        vec![7, 0, 64, 1, 128, 100],
    ] {
        let (_, root) = grow_in_batches(&leaves, &batches);
        assert_eq!(root, merkle::root(&leaves));
    }
}

#[test]
fn every_node_is_the_root_of_its_complete_subtree() {
    let leaves = data(100);
    let (nodes, _) = grow_in_batches(&leaves, &[3, 30, 67]);
    // One node per complete subtree of 100 leaves: 100 + 50 + 25 + 12 + 6 + 3 + 1.
    assert_eq!(nodes.len(), 197);
    for node in nodes {
        let begin = (node.index << node.level) as usize;
        let end = ((node.index + 1) << node.level) as usize;
        assert_eq!(node.hash, merkle::root(&leaves[begin..end]), "{node:?}");
    }
}

#[test]
fn nodes_come_in_the_order_they_complete() {
    let leaves = data(4);
    let (nodes, _) = grow_in_batches(&leaves, &[4]);
    let ids: Vec<_> = nodes.iter().map(|n| (n.level, n.index)).collect();
    assert_eq!(
        ids,
        [(0, 0), (0, 1), (1, 0), (0, 2), (0, 3), (1, 1), (2, 0)]
    );
}

#[test]
fn frontier_is_one_subtree_per_bit_left_to_right() {
    assert_eq!(frontier(0).count(), 0);
    assert_eq!(frontier(1).collect::<Vec<_>>(), [(0, 0)]);
    assert_eq!(frontier(6).collect::<Vec<_>>(), [(2, 0), (1, 2)]);
    assert_eq!(frontier(13).collect::<Vec<_>>(), [(3, 0), (2, 2), (0, 12)]);
    assert_eq!(frontier(u64::MAX).count(), 64);
}

#[test]
fn nothing_appended_gives_the_stored_root() {
    let leaves = data(13);
    let (nodes, root13) = grow_in_batches(&leaves, &[13]);
    let lookup = |(level, index)| {
        nodes
            .iter()
            .find(|n| (n.level, n.index) == (level, index))
            .unwrap()
            .hash
    };
    let growth = grow(13, frontier(13).map(lookup).collect(), &[]);
    assert_eq!(
        growth,
        Growth {
            nodes: vec![],
            root: root13
        }
    );
    assert_eq!(grow(0, vec![], &[]).root, merkle::root::<&[u8]>(&[]));
}
