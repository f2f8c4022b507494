// RFC 6962 Merkle trees (docs/spec.md section 5): hashes, the root, and the verification of
// inclusion and consistency proofs (RFC 9162 2.1.3.2 and 2.1.4.2), refusing in the spec's
// order: sizes and index, then proof length and node size, then roots. Indexes and sizes may
// be numbers or BigInts (log sizes go up to 2^64 - 1).

import { equal, sha256, toHex } from "./bytes.js";
import { CommitError } from "./json.js";

export const leafHash = (data) => sha256(new Uint8Array([0]), data);
export const nodeHash = (left, right) => sha256(new Uint8Array([1]), left, right);

/** MTH(D[n]) of RFC 6962 2.1; the root of no leaves is SHA-256(""). */
export async function merkleRoot(leaves) {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return leafHash(leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(await merkleRoot(leaves.slice(0, k)), await merkleRoot(leaves.slice(k)));
}

const wrongLength = (kind) => new CommitError("proof_invalid", `${kind} proof has the wrong number of nodes`);

function checkNodes(proof) {
  proof.forEach((node, position) => {
    if (node.length !== 32) {
      throw new CommitError("proof_invalid", `proof node ${position} has ${node.length} bytes, not 32`);
    }
  });
}

function checkRoot(name, expected, computed) {
  if (!equal(expected, computed)) {
    const message = `${name} mismatch: expected ${toHex(expected)}, computed ${toHex(computed)}`;
    throw new CommitError("root_mismatch", message);
  }
}

/** Raise CommitError unless `proof` puts the leaf data `leaf` at `index` under `root`. */
export async function verifyInclusion(leaf, index, size, proof, root) {
  [index, size] = [BigInt(index), BigInt(size)];
  if (index < 0n) throw new CommitError("index_out_of_range", `index ${index} is negative`);
  if (size < 0n) throw new CommitError("size_invalid", `tree size ${size} is negative`);
  if (index >= size) {
    throw new CommitError("index_out_of_range", `index ${index} is outside a tree of ${size} leaves`);
  }
  checkNodes(proof);
  let [fn, sn] = [index, size - 1n];
  let r = await leafHash(leaf);
  for (const p of proof) {
    if (sn === 0n) throw wrongLength("inclusion");
    if (fn & 1n || fn === sn) {
      r = await nodeHash(p, r);
      while (!(fn & 1n) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else {
      r = await nodeHash(r, p);
    }
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  if (sn !== 0n) throw wrongLength("inclusion");
  checkRoot("root", root, r);
}

/** Raise CommitError unless the tree (oldSize, oldRoot) is a prefix of (newSize, newRoot). */
export async function verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof) {
  [oldSize, newSize] = [BigInt(oldSize), BigInt(newSize)];
  if (oldSize < 0n || newSize < 0n || oldSize > newSize) {
    throw new CommitError("size_invalid", `sizes ${oldSize} and ${newSize}: need 0 <= old <= new`);
  }
  if (oldSize === 0n) {
    if (proof.length) throw wrongLength("consistency");
    return; // every tree extends the empty tree
  }
  if (oldSize === newSize) {
    if (proof.length) throw wrongLength("consistency");
    checkRoot("new root", newRoot, oldRoot);
    return;
  }
  if (!proof.length) throw wrongLength("consistency");
  checkNodes(proof);
  // A power of two: the old tree is itself a node of the new tree.
  const path = (oldSize & (oldSize - 1n)) === 0n ? [oldRoot, ...proof] : [...proof];
  let [fn, sn] = [oldSize - 1n, newSize - 1n];
  while (fn & 1n) [fn, sn] = [fn >> 1n, sn >> 1n];
  let [fr, sr] = [path[0], path[0]];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw wrongLength("consistency");
    if (fn & 1n || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (!(fn & 1n) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else {
      sr = await nodeHash(sr, c);
    }
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  if (sn !== 0n) throw wrongLength("consistency");
  checkRoot("old root", oldRoot, fr);
  checkRoot("new root", newRoot, sr);
}
