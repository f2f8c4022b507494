// The C2SP transparency-log formats a seal uses (docs/tlog.md): vkeys and key IDs, signed
// notes, checkpoints, cosignature/v1 (Ed25519), subtree/v1 (ML-DSA-44, which logs sign their
// checkpoints with too), and the c2sp.org/tlog-proof@v1 text of a bundle's seal.

import { concat, ed25519Verify, fromBase64, mldsa44Verify, sha256, toBase64, utf8 } from "./bytes.js";

export const ED25519 = 0x01;
export const COSIGNATURE_V1 = 0x04;
export const MLDSA44 = 0x06;
export const MAX_SIGNATURES = 100;
/** Each known signature type's public key size and algorithm. */
const KEY_SIZES = new Map([[ED25519, 32], [COSIGNATURE_V1, 32], [MLDSA44, 1312]]);
export const ALGORITHMS = new Map([[ED25519, "Ed25519"], [COSIGNATURE_V1, "Ed25519"], [MLDSA44, "ML-DSA-44"]]);
const MAX_TIMESTAMP = 2n ** 63n - 1n;
const CONTROL = /[\u0000-\u0009\u000b-\u001f]/;

/** A parse or verification failure, with a stable code as in recordseal.tlog. */
export class TlogError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export const hex8 = (id) => id.toString(16).padStart(8, "0");

export function isValidName(name) {
  return Boolean(name) && !name.includes("+") && !/\s/u.test(name) && !CONTROL.test(name);
}

/** SHA-256(name ‖ 0x0A ‖ signature type ‖ public key)[:4] as an unsigned 32-bit number. */
export async function keyId(name, type, publicKey) {
  const digest = await sha256(name, "\n", new Uint8Array([type]), publicKey);
  return new DataView(digest.buffer).getUint32(0);
}

/** A vkey `<name>+<key ID hex>+<base64(type ‖ key)>` of one of the given types (a type or a
 * list): {name, keyId, publicKey, type}. */
export async function parseVkey(text, types) {
  const accepted = Array.isArray(types) ? types : [types];
  const plus = text.indexOf("+");
  const name = plus < 0 ? text : text.slice(0, plus);
  const rest = plus < 0 ? "" : text.slice(plus + 1);
  const second = rest.indexOf("+");
  const [idHex, material64] = second < 0 ? [rest, ""] : [rest.slice(0, second), rest.slice(second + 1)];
  if (!isValidName(name)) throw new TlogError("key_malformed", "vkey name is empty or has a space or '+'");
  if (!/^[0-9a-fA-F]{8}$/.test(idHex)) throw new TlogError("key_malformed", "vkey key ID is not 8 hex digits");
  const material = fromBase64(material64);
  if (!material || material.length === 0) {
    throw new TlogError("key_malformed", "vkey key material is not canonical base64");
  }
  const type = material[0];
  const size = KEY_SIZES.get(type);
  if (size === undefined) {
    throw new TlogError("key_unsupported", "vkey signature type is not Ed25519 (0x01 or 0x04) nor ML-DSA-44 (0x06)");
  }
  const publicKey = material.slice(1);
  if (publicKey.length !== size) {
    throw new TlogError("key_malformed", `vkey ${ALGORITHMS.get(type)} key is not ${size} bytes`);
  }
  const id = await keyId(name, type, publicKey);
  if (id !== parseInt(idHex, 16)) {
    throw new TlogError("key_hash_mismatch", `vkey says key ID ${idHex}, the key's is ${hex8(id)}`);
  }
  if (!accepted.includes(type)) {
    throw new TlogError("key_unsupported", `vkey of ${name} has type 0x0${type}, expected ${accepted.map((t) => `0x0${t}`).join(" or ")}`);
  }
  return { name, keyId: id, publicKey, type };
}

/** One signature line `— <name> base64(key ID ‖ signature)`: {name, keyId, signature}. */
function parseSignatureLine(line, number) {
  if (!line.startsWith("— ")) {
    throw new TlogError("signature_malformed", `signature line ${number} does not start with an em dash and a space`);
  }
  const body = line.slice(2);
  const space = body.indexOf(" ");
  const name = space < 0 ? body : body.slice(0, space);
  if (space < 0 || !isValidName(name)) {
    throw new TlogError("signature_malformed", `signature line ${number} has no valid key name followed by a space`);
  }
  const raw = fromBase64(body.slice(space + 1));
  if (raw === null) throw new TlogError("signature_malformed", `signature line ${number} (${name}) is not canonical base64`);
  if (raw.length <= 4) throw new TlogError("signature_malformed", `signature line ${number} (${name}) has no signature`);
  return { name, keyId: new DataView(raw.buffer).getUint32(0), signature: raw.slice(4) };
}

/** A signed note's syntax: {text, signatures}; the last blank line separates the two. */
export function parseNote(data) {
  if (CONTROL.test(data)) throw new TlogError("note_malformed", "note contains an ASCII control character");
  const split = data.lastIndexOf("\n\n");
  if (split < 0) throw new TlogError("note_malformed", "note has no blank line before its signatures");
  const [text, block] = [data.slice(0, split + 1), data.slice(split + 2)];
  if (!block) throw new TlogError("note_malformed", "note has no signature line after its last blank line");
  if (!block.endsWith("\n")) throw new TlogError("note_malformed", "note does not end in a newline");
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_SIGNATURES) {
    throw new TlogError("too_many_signatures", `note has ${lines.length} signature lines`);
  }
  const signatures = lines.map((line, i) => parseSignatureLine(line, i + 1));
  const seen = new Set();
  for (const { name, keyId: id } of signatures) {
    const key = `${name}+${hex8(id)}`;
    if (seen.has(key)) throw new TlogError("signature_duplicate", `two signatures by the key ${key}`);
    seen.add(key);
  }
  return { text, signatures };
}

/** Whether `signature` (the bytes after the key ID) is a log key's valid signature over the
 * note text: Ed25519 over the text (type 0x01), or an ML-DSA-44 cosignature by the log of its
 * checkpoint (type 0x06: timestamp ‖ signature over the subtree/v1 message). */
async function logSignatureValid(verifier, text, signature) {
  if (verifier.type !== MLDSA44) return ed25519Verify(verifier.publicKey, utf8(text), signature);
  if (signature.length !== 8 + 2420) return false;
  const timestamp = new DataView(signature.buffer, signature.byteOffset).getBigUint64(0);
  if (timestamp > MAX_TIMESTAMP) return false;
  let message;
  try {
    message = subtreeMessage(verifier.name, timestamp, text);
  } catch (error) {
    if (error instanceof TlogError) return false;
    throw error;
  }
  return mldsa44Verify(verifier.publicKey, message, signature.slice(8));
}

/** Check a note against log keys ({name, keyId, publicKey, type}, types 0x01 and 0x06): a
 * known key's bad signature rejects the note, unknown keys are ignored, and one known key must
 * have signed. Returns the signatures of known keys (all verified), each with its `verifier`. */
export async function verifyNote(note, verifiers) {
  const known = new Map();
  for (const verifier of verifiers) {
    const key = `${verifier.name}+${hex8(verifier.keyId)}`;
    const other = known.get(key);
    if (other && toBase64(other.publicKey) !== toBase64(verifier.publicKey)) {
      throw new TlogError("verifier_ambiguous", `two different verifiers share the key ${key}`);
    }
    known.set(key, verifier);
  }
  const verified = [];
  for (const signature of note.signatures) {
    const key = `${signature.name}+${hex8(signature.keyId)}`;
    const found = known.get(key);
    if (!found) continue;
    if (!(await logSignatureValid(found, note.text, signature.signature))) {
      throw new TlogError("signature_invalid", `the signature of ${key} does not verify`);
    }
    verified.push({ ...signature, verifier: found });
  }
  if (!verified.length) throw new TlogError("note_unverified", "no signature on the note is from a known key");
  return verified;
}

const malformedCheckpoint = (message) => new TlogError("checkpoint_malformed", message);

/** A checkpoint body: origin, tree size (BigInt), root hash, extension lines. */
export function parseCheckpoint(text) {
  if (!text.endsWith("\n")) throw malformedCheckpoint("the checkpoint does not end in a newline");
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) throw malformedCheckpoint(`the checkpoint has ${lines.length} lines, fewer than 3`);
  const [origin, sizeLine, rootLine, ...extensions] = lines;
  if (!/^(?:0|[1-9][0-9]{0,19})$/.test(sizeLine) || BigInt(sizeLine) > 2n ** 64n - 1n) {
    throw malformedCheckpoint("the tree size is not a decimal in 0..2^64-1 without leading zeros");
  }
  const rootHash = fromBase64(rootLine);
  if (!rootHash || rootHash.length !== 32) throw malformedCheckpoint("the root hash is not the base64 of 32 bytes");
  if (!origin) throw malformedCheckpoint("the origin is empty");
  if (extensions.some((line) => !line)) throw malformedCheckpoint("an extension line is empty");
  return { origin, size: BigInt(sizeLine), rootHash, extensions };
}

const EMPTY_ROOT = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";

/** One opaque<1..2^8-1> field: a length byte, then the UTF-8 bytes. */
function opaque(text, what) {
  const data = utf8(text);
  if (data.length < 1 || data.length > 255) {
    throw new TlogError("cosignature_malformed", `the ${what} has ${data.length} bytes, not 1 to 255`);
  }
  return concat(new Uint8Array([data.length]), data);
}

function uint64(value) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value));
  return out;
}

/** The subtree/v1 cosigned_message of `cosigner` over a checkpoint body (the subtree
 * [0, size)): label, name, timestamp, origin, start, end, root (c2sp.org/tlog-cosignature). */
export function subtreeMessage(cosigner, timestamp, checkpointText) {
  const checkpoint = parseCheckpoint(checkpointText);
  if (checkpoint.extensions.length) {
    throw new TlogError("cosignature_malformed", "an ML-DSA-44 cosignature covers no extension lines: the checkpoint has some");
  }
  if (checkpoint.size === 0n && toBase64(checkpoint.rootHash) !== EMPTY_ROOT) {
    throw new TlogError("cosignature_malformed", "the root of an empty tree is SHA-256 of the empty string");
  }
  if (BigInt(timestamp) > MAX_TIMESTAMP) throw new TlogError("cosignature_malformed", "cosignature timestamp above 2^63-1");
  return concat(
    utf8("subtree/v1\n\0"), opaque(cosigner, "cosigner name"), uint64(timestamp),
    opaque(checkpoint.origin, "log origin"), uint64(0n), uint64(checkpoint.size), checkpoint.rootHash,
  );
}

/** The valid cosignature of a witness ({name, keyId, publicKey, type}: 0x04 Ed25519
 * cosignature/v1, or 0x06 ML-DSA-44 subtree/v1) over a checkpoint body: its timestamp in
 * POSIX seconds (BigInt; 0 states no time); TlogError otherwise. */
export async function verifyCosignature(checkpointText, signature, witness, maxTimestamp) {
  const size = signature.signature.length;
  if (size !== 8 + 64 && size !== 8 + 2420) {
    throw new TlogError("cosignature_malformed", `cosignature of ${signature.name} is not 72 nor 2428 bytes`);
  }
  const timestamp = new DataView(signature.signature.buffer, signature.signature.byteOffset).getBigUint64(0);
  if (timestamp > MAX_TIMESTAMP) throw new TlogError("cosignature_malformed", "cosignature timestamp above 2^63-1");
  const mldsa = witness.type === MLDSA44;
  if (size !== 8 + (mldsa ? 2420 : 64)) {
    throw new TlogError("cosignature_malformed", `cosignature of ${witness.name} has a signature of ${size - 8} bytes`);
  }
  if (timestamp > maxTimestamp) {
    throw new TlogError("cosignature_future", `cosignature time ${timestamp} is after ${maxTimestamp}`);
  }
  const signed = signature.signature.slice(8);
  let valid;
  if (mldsa) {
    valid = await mldsa44Verify(witness.publicKey, subtreeMessage(witness.name, timestamp, checkpointText), signed);
  } else {
    parseCheckpoint(checkpointText);
    const message = concat(`cosignature/v1\ntime ${timestamp}\n`, checkpointText);
    valid = await ed25519Verify(witness.publicKey, message, signed);
  }
  if (!valid) {
    throw new TlogError("cosignature_invalid", `the cosignature of ${witness.name} does not verify over this checkpoint`);
  }
  return timestamp;
}

/** c2sp.org/tlog-proof@v1: {index (BigInt), hashes, checkpoint (the signed note text)}. */
export function parseTlogProof(text) {
  const blank = text.indexOf("\n\n");
  if (blank < 0 || blank + 2 === text.length) throw new TlogError("proof_malformed", "no empty line followed by a checkpoint");
  const [head, checkpoint] = [text.slice(0, blank), text.slice(blank + 2)];
  const lines = head.split("\n");
  if (lines[0] !== "c2sp.org/tlog-proof@v1") {
    throw new TlogError("proof_malformed", "the first line is not c2sp.org/tlog-proof@v1");
  }
  let position = 1;
  if (lines.length > position && lines[position].startsWith("extra ")) {
    if (fromBase64(lines[position].slice(6)) === null) {
      throw new TlogError("proof_malformed", "the extra line is not canonical base64");
    }
    position += 1;
  }
  const match = /^index (0|[1-9][0-9]{0,18})$/.exec(lines[position] ?? "");
  if (!match || BigInt(match[1]) > 2n ** 63n - 1n) {
    throw new TlogError("proof_malformed", "no 'index' line with a decimal below 2^63 without leading zeros");
  }
  const hashes = lines.slice(position + 1).map((line, i) => {
    const node = fromBase64(line);
    if (!node || node.length !== 32) {
      throw new TlogError("proof_malformed", `proof line ${i + 1} is not the base64 of 32 bytes`);
    }
    return node;
  });
  return { index: BigInt(match[1]), hashes, checkpoint };
}
