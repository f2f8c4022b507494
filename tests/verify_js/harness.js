// Test-only: runs the shared vector files (tests/vectors/) through the browser verifier's
// modules and returns the cases that disagree, as {name, expected, got}.

import { fromHex, toHex, utf8 } from "/static/verify/bytes.js";
import { canonicalize, CommitError, numberText } from "/static/verify/json.js";
import { encodeValue } from "/static/verify/kinds.js";
import { commitRecord } from "/static/verify/commitments.js";
import { merkleRoot, verifyConsistency, verifyInclusion } from "/static/verify/rfc6962.js";
import { loadKeyDirectory, loadTrustStore } from "/static/verify/documents.js";
import { verifyBundle } from "/static/verify/checks.js";
import {
  COSIGNATURE_V1, ED25519, MLDSA44, parseNote, parseVkey, subtreeMessage, TlogError, verifyCosignature, verifyNote,
} from "/static/verify/notes.js";
import { aggregateEntry } from "/static/verify/aggregate.js";

const load = async (name) => (await fetch(`/vectors/${name}`)).json();

/** {code, field} of a CommitError, or the value of a call that succeeded. */
async function outcome(call) {
  try {
    return { value: await call() };
  } catch (error) {
    if (error instanceof CommitError) return { error: { code: error.code, field: error.field } };
    return { error: { code: `${error.name}: ${error.message}`, field: null } };
  }
}

function compare(mismatches, name, expected, got) {
  if (JSON.stringify(expected) !== JSON.stringify(got)) mismatches.push({ name, expected, got });
}

export async function jcs() {
  const mismatches = [];
  const { cases } = await load("jcs.json");
  for (const c of cases) {
    const input = c.input_hex !== undefined ? fromHex(c.input_hex) : utf8(c.input);
    const got = await outcome(() => canonicalize(input));
    compare(mismatches, c.name, c.error ? { error: c.error } : { value: c.output }, got);
  }
  return { count: cases.length, mismatches };
}

export async function numbers() {
  const mismatches = [];
  const { cases } = await load("numbers.json");
  for (const c of cases) {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, BigInt("0x" + c.bits));
    compare(mismatches, c.name, c.text, numberText(view.getFloat64(0)));
  }
  return { count: cases.length, mismatches };
}

export async function kinds() {
  const mismatches = [];
  const { cases } = await load("kinds.json");
  for (const c of cases) {
    const got = await outcome(() => encodeValue(c.kind, c.value));
    compare(mismatches, c.name, c.error ? { error: c.error } : { value: c.encoded }, got);
  }
  return { count: cases.length, mismatches };
}

function generated({ fields, depth, bytes }) {
  if (fields !== undefined) {
    const members = Array.from({ length: fields }, (_, i) => `"f${String(i).padStart(4, "0")}":${i}`);
    return `{${members.join(",")}}`;
  }
  if (depth !== undefined) return '{"a":'.repeat(depth - 1) + '{"a":1}' + "}".repeat(depth - 1);
  return `{"s":"${"x".repeat(bytes - 8)}"}`;
}

export async function records() {
  const mismatches = [];
  const { cases } = await load("records.json");
  for (const c of cases) {
    const payload = utf8(c.payload ?? generated(c.generate));
    const got = await outcome(async () => {
      const record = await commitRecord(payload, c.declarations, c.strict, fromHex(c.salt_key), c.record_id);
      const result = { canonical: record.canonical, root: toHex(record.root), field_count: record.fieldCount };
      if (c.expected?.leaves) {
        result.leaves = record.leaves.map((leaf) => ({
          path: leaf.path, kind: leaf.kind, encoded: leaf.encoded,
          salt: toHex(leaf.salt), commitment: toHex(leaf.commitment),
        }));
      }
      return result;
    });
    compare(mismatches, c.name, c.error ? { error: c.error } : { value: c.expected }, got);
  }
  return { count: cases.length, mismatches };
}

export async function rfc6962() {
  const mismatches = [];
  const vectors = await load("rfc6962.json");
  const leaves = vectors.leaves.map(fromHex);
  const roots = new Map(vectors.roots.map(({ size, root }) => [size, root]));
  let count = 0;
  for (const { size, root } of vectors.roots) {
    count += 1;
    compare(mismatches, `root ${size}`, root, toHex(await merkleRoot(leaves.slice(0, size))));
  }
  for (const c of vectors.inclusion) {
    count += 1;
    const got = await outcome(() =>
      verifyInclusion(leaves[c.index], c.index, c.size, c.proof.map(fromHex), fromHex(roots.get(c.size))));
    compare(mismatches, `inclusion ${c.index}/${c.size}`, {}, got);
  }
  for (const c of vectors.consistency) {
    count += 1;
    const got = await outcome(() => verifyConsistency(c.old_size, c.new_size,
      fromHex(roots.get(c.old_size)), fromHex(roots.get(c.new_size)), c.proof.map(fromHex)));
    compare(mismatches, `consistency ${c.old_size}->${c.new_size}`, {}, got);
  }
  for (const c of vectors.inclusion_negative) {
    count += 1;
    const got = await outcome(() =>
      verifyInclusion(fromHex(c.leaf), c.index, c.size, c.proof.map(fromHex), fromHex(c.root)));
    compare(mismatches, c.name, { error: c.error }, got);
  }
  for (const c of vectors.consistency_negative) {
    count += 1;
    const got = await outcome(() => verifyConsistency(c.old_size, c.new_size,
      fromHex(c.old_root), fromHex(c.new_root), c.proof.map(fromHex)));
    compare(mismatches, c.name, { error: c.error }, got);
  }
  return { count, mismatches };
}

/** Verify each {bundle (hex), keys, trust (texts or null), now (POSIX seconds)}. */
export async function verifyAll(cases) {
  const results = [];
  for (const c of cases) {
    const keyring = c.keys === null ? null : await loadKeyDirectory(c.keys);
    const policy = c.trust === null ? null : await loadTrustStore(c.trust);
    results.push(await verifyBundle(fromHex(c.bundle), keyring, policy, { now: c.now }));
  }
  return results;
}

/** gaps.json: each bundle's verdict, check statuses and (where given) check 6's detail. */
export async function gaps() {
  const mismatches = [];
  const vectors = await load("gaps.json");
  const keyring = await loadKeyDirectory(JSON.stringify(vectors.keys));
  const policy = await loadTrustStore(JSON.stringify(vectors.trust));
  const now = Date.parse(vectors.now) / 1000;
  for (const c of vectors.cases) {
    const result = await verifyBundle(JSON.stringify(c.bundle), keyring, policy, { now });
    const got = { verdict: result.verdict, statuses: result.checks.map((check) => check.status) };
    if (c.expected.detail_6 !== undefined) got.detail_6 = result.checks[5].detail;
    compare(mismatches, c.name, c.expected, got);
  }
  return { count: vectors.cases.length, mismatches };
}

/** malformed.json: each bundle's text: the verdict, the check statuses, no record, nothing
 * disclosed, and check 1 naming the member. */
export async function malformed() {
  const mismatches = [];
  const vectors = await load("malformed.json");
  const keyring = await loadKeyDirectory(JSON.stringify(vectors.keys));
  const policy = await loadTrustStore(JSON.stringify(vectors.trust));
  for (const c of vectors.cases) {
    const result = await verifyBundle(utf8(c.bundle_text), keyring, policy);
    const detail = result.checks[0].detail;
    const got = {
      verdict: result.verdict, statuses: result.checks.map((check) => check.status),
      record: result.record, disclosed: result.disclosed,
      detail_1: detail.startsWith(c.expected.detail_1) ? c.expected.detail_1 : detail,
      member: detail.includes(c.expected.member) ? c.expected.member : detail,
    };
    compare(mismatches, c.name, c.expected, got);
  }
  return { count: vectors.cases.length, mismatches };
}

/** compromise.json: each bundle, with its own key directory and trust store: the verdict, the
 * check statuses, and the words each named check's detail must hold. */
export const compromise = () => withDirectories("compromise.json");

/** aggregate.json: bundles proven through the aggregate log, as compromise.json's cases; and
 * the worked example's entry, computed here from the sealing checkpoint. */
export async function aggregate() {
  const found = await withDirectories("aggregate.json");
  const { example } = await load("aggregate.json");
  const { origin, size, root } = example.sealing;
  const entry = toHex(await aggregateEntry(origin, BigInt(size), fromHex(root)));
  compare(found.mismatches, "the example's entry", example.entry, entry);
  return { count: found.count + 1, mismatches: found.mismatches };
}

async function withDirectories(file) {
  const mismatches = [];
  const vectors = await load(file);
  const now = Date.parse(vectors.now) / 1000;
  for (const c of vectors.cases) {
    const keyring = await loadKeyDirectory(JSON.stringify(c.keys));
    const policy = c.trust === null ? null : await loadTrustStore(JSON.stringify(c.trust));
    const result = await verifyBundle(JSON.stringify(c.bundle), keyring, policy, { now });
    const details = Object.fromEntries(Object.entries(c.expected.details).map(
      ([number, text]) => [number, result.checks[number - 1].detail.includes(text) ? text : result.checks[number - 1].detail]));
    const got = { verdict: result.verdict, statuses: result.checks.map((check) => check.status), details };
    compare(mismatches, c.name, c.expected, got);
  }
  return { count: vectors.cases.length, mismatches };
}

/** mldsa44.json: torchwood's published checkpoint opens with its vkey (and no longer when its
 * size is changed); every subtree/v1 message is the spelt-out one; each cosignature verifies
 * or is refused with its code; each bundle gets its verdict and statuses. */
export async function mldsa44() {
  const mismatches = [];
  const vectors = await load("mldsa44.json");
  let count = 0;
  const torchwood = vectors.torchwood;
  const log = await parseVkey(torchwood.vkey, [ED25519, MLDSA44]);
  const opened = async (text) => {
    try {
      return (await verifyNote(parseNote(text), [log])).length;
    } catch (error) {
      if (error instanceof TlogError) return error.code;
      throw error;
    }
  };
  count += 2;
  compare(mismatches, "torchwood", 1, await opened(torchwood.signed_checkpoint));
  compare(mismatches, "torchwood, size changed", "signature_invalid",
    await opened(torchwood.signed_checkpoint.replace("\n1\n", "\n2\n")));
  for (const m of vectors.messages) {
    count += 1;
    compare(mismatches, m.name, m.message, toHex(subtreeMessage(m.cosigner, BigInt(m.timestamp), m.checkpoint)));
  }
  for (const c of vectors.cosignatures.cases) {
    count += 1;
    const witness = await parseVkey(c.vkey ?? vectors.cosignatures.vkey, [COSIGNATURE_V1, MLDSA44]);
    const [signature] = parseNote(`x\n\n${c.line}`).signatures;
    let got = null;
    try {
      await verifyCosignature(c.checkpoint, signature, witness, 2n ** 62n);
    } catch (error) {
      if (!(error instanceof TlogError)) throw error;
      got = error.code;
    }
    compare(mismatches, c.name, c.error, got);
  }
  const now = Date.parse(vectors.now) / 1000;
  for (const c of vectors.bundles) {
    count += 1;
    const keyring = await loadKeyDirectory(JSON.stringify(c.keys));
    const policy = c.trust === null ? null : await loadTrustStore(JSON.stringify(c.trust));
    const result = await verifyBundle(JSON.stringify(c.bundle), keyring, policy, { now });
    compare(mismatches, c.name, c.expected,
      { verdict: result.verdict, statuses: result.checks.map((check) => check.status) });
  }
  return { count, mismatches };
}

/** The message a key directory ("keys") or trust store ("trust") text is refused with, or
 * null when it loads. */
export async function loadError({ kind, text }) {
  try {
    await (kind === "keys" ? loadKeyDirectory : loadTrustStore)(text);
    return null;
  } catch (error) {
    return error.message;
  }
}
