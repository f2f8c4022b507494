// The seven checks of docs/bundle.md section 3, the verdict and the time bracket: a
// transcription of python/recordseal/verify/checks.py, whose per-check statuses this must equal.
// RFC 3161 tokens are not checked here (no CMS parser): they are reported, never counted.

import { concat, ed25519Verify, fromBase64, fromHex, lengthPrefixed, sha256, toHex, utf8 } from "./bytes.js";
import { commitField, pathProblem } from "./commitments.js";
import { CommitError, serialize } from "./json.js";
import { encodeValue } from "./kinds.js";
import { parseCheckpoint, parseNote, TlogError, verifyNote } from "./notes.js";
import { aggregateTimes } from "./aggregate.js";
import { cosignatureTimes, openSeal, signedAlgorithms, STALE_DIRECTORY, unsignedReasons } from "./sealing.js";
import { BundleError, decodeBundle, formatSeconds, GAP_FORMAT, parseInstant } from "./documents.js";
import {
  afterCompromise, checkpointProblem, compromiseProblem, linkedToRecord, NOT_VOUCHED, notWitnessed, witnessedOf,
} from "./compromise.js";
import { leafHash, verifyConsistency, verifyInclusion } from "./rfc6962.js";

export const CHECK_NAMES = [
  "field commitments", "record tree", "header signature", "sealed batch", "witness receipts",
  "sequence continuity", "verdict and time bracket",
];
const HOSTED_INGEST = "hosted-ingest";
const CLOCK_SKEW_SECONDS = 300;
const NO_PUBLIC_KEY = "no public key in the supplied directory";
const NO_INCLUSION_PROOF = "no chain inclusion proof";
const NO_RECEIPTS = "no witness receipts";
/** Said of a key or log the directory lacks: the usual cause is a directory older than it. */
const HEADER_CONTEXT = concat("recordseal/header/v1", new Uint8Array([0]));
const GAP_CONTEXT = concat(GAP_FORMAT, new Uint8Array([0]));
const isGap = (header) => header.format === GAP_FORMAT;

const result = (status) => (number, detail) => ({ number, name: CHECK_NAMES[number - 1], status, detail });
const passed = result("passed");
const failed = result("failed");
const unchecked = result("unchecked");

/** A check that meets an unexpected exception reports it as failed instead of throwing. */
async function guarded(number, check) {
  try {
    return await check();
  } catch (error) {
    return failed(number, `internal error: ${error.name}: ${error.message}`);
  }
}

function joined(problems, limit = 3) {
  const text = problems.slice(0, limit).join("; ");
  return problems.length > limit ? `${text}; and ${problems.length - limit} more` : text;
}

const plural = (count, word, many = word + "s") => (count === 1 ? word : many);
const canonicalOf = (header) => utf8(serialize(header));

export function streamGenesis(tenant, stream) {
  return sha256("recordseal-stream-genesis-v1", lengthPrefixed(tenant), lengthPrefixed(stream));
}

// --- 1. field commitments ------------------------------------------------------------------

async function recompute(fields) {
  const problems = [];
  const commitments = [];
  const [paths, indexes] = [new Set(), new Set()];
  for (const field of fields) {
    const label = JSON.stringify(field.path);
    if (paths.has(field.path)) problems.push(`${label} is disclosed twice`);
    if (indexes.has(field.index)) problems.push(`${label}: index ${field.index} is used by another field`);
    paths.add(field.path);
    indexes.add(field.index);
    const salt = fromHex(field.salt);
    const problem = pathProblem(field.path);
    if (problem !== null) {
      problems.push(`${label} is not a committed path: it ${problem}`);
      continue;
    }
    if (salt.length !== 32) {
      problems.push(`${label}: the salt has ${salt.length} bytes, not 32`);
      continue;
    }
    let encoded;
    try {
      encoded = encodeValue(field.kind, field.value);
    } catch (error) {
      if (!(error instanceof CommitError)) throw error;
      problems.push(`${label}: the value is refused as '${field.kind}' (${error.code})`);
      continue;
    }
    commitments.push(await commitField(field.path, salt, utf8(encoded)));
  }
  return { commitments, problems };
}

async function checkFieldCommitments(fields) {
  const { problems } = await recompute(fields);
  if (problems.length) return failed(1, joined(problems));
  if (!fields.length) return passed(1, "no field disclosed: the bundle proves the header only");
  return passed(1, `${fields.length} ${plural(fields.length, "field")} recomputed`);
}

// --- 2. record tree ------------------------------------------------------------------------

async function checkRecordTree(header, fields) {
  const { commitments, problems } = await recompute(fields);
  if (problems.length) return unchecked(2, "not run: the field commitments could not be recomputed (check 1)");
  const root = fromHex(header.root);
  for (const [i, field] of fields.entries()) {
    try {
      await verifyInclusion(commitments[i], field.index, header.field_count, field.proof.map(fromHex), root);
    } catch (error) {
      if (!(error instanceof CommitError)) throw error;
      problems.push(`'${field.path}' at index ${field.index}: ${error.code} (${error.message})`);
    }
  }
  if (problems.length) return failed(2, joined(problems));
  const where = `root ${header.root.slice(0, 16)}… of ${header.field_count} fields`;
  if (!fields.length) return passed(2, `no field to place under ${where}`);
  return passed(2, `${fields.length} of ${header.field_count} fields verified under ${where}`);
}

// --- 3. header signature -------------------------------------------------------------------

function keyProblemAt(key, moment) {
  if (moment < key.notBefore[0]) return `key ${key.keyId} is valid only from ${key.notBefore[1]}`;
  if (key.notAfter && moment >= key.notAfter[0]) return `key ${key.keyId} expired at ${key.notAfter[1]}`;
  if (key.revokedAt && moment >= key.revokedAt[0]) return `key ${key.keyId} was revoked at ${key.revokedAt[1]}`;
  return null;
}

/** [status, reason] when the header's signature or key fails, else null. A record header is
 * signed under recordseal/header/v1 by a key valid at its ingested_at, a gap header under
 * recordseal/gap/v1 by a key valid at its declared_at. */
async function signatureProblem(header, canonical, signature, keyring, witnessed) {
  const key = keyring.headerKeys.get(header.key_id);
  if (!key) return ["unchecked", `${NO_PUBLIC_KEY} for key ${header.key_id}`];
  const gap = isGap(header);
  const context = gap ? GAP_CONTEXT : HEADER_CONTEXT;
  if (!(await ed25519Verify(key.publicKey, concat(context, canonical), signature))) {
    return ["failed", `the Ed25519 signature does not verify with key ${header.key_id}`];
  }
  const when = gap ? header.declared_at : header.ingested_at;
  const problem = keyProblemAt(key, parseInstant(when));
  const event = gap ? "the gap was declared" : "the record was ingested";
  if (problem !== null) return ["failed", `${problem}, and ${event} at ${when}`];
  return compromiseProblem(`key ${header.key_id}`, key.compromisedAt, witnessed, gap ? "the gap header" : "the record");
}

/** `witnessed`: the record's trusted witness time, only when check 4 passed. */
async function checkHeaderSignature(header, canonical, signature, keyring, noKeys, witnessed) {
  if (keyring === null) return unchecked(3, `${NO_PUBLIC_KEY}: ${noKeys}`);
  const problem = await signatureProblem(header, canonical, signature, keyring, witnessed);
  if (problem === null) {
    const after = afterCompromise(keyring.headerKeys.get(header.key_id).compromisedAt, witnessed);
    return passed(3, `signed by key ${header.key_id}, valid at ${header.ingested_at}${after}`);
  }
  return problem[0] === "unchecked" ? unchecked(3, `${problem[1]}: ${STALE_DIRECTORY}`) : failed(3, problem[1]);
}

// --- 4. sealed batch -----------------------------------------------------------------------

/** Check 4's unchecked results that a listed authority's token might turn (rule 4.8 here). */
const TOKEN_PENDING = new WeakSet();

/** `witnessed`: the trusted witness time on the sealing checkpoint (rule 4.8); `required`:
 * the algorithms of the log signatures the trust store requires (rule 4.9). */
async function checkSealedBatch(canonical, seal, opened, keyring, witnessed, required) {
  if (seal === null || opened === null) {
    return unchecked(4, `${NO_INCLUSION_PROOF}: the record is not in a sealed batch yet`);
  }
  if (opened instanceof BundleError) return failed(4, opened.message);
  // No directory at all: nothing stale to export again (the words of check 3).
  if (!keyring) return unchecked(4, `${NO_INCLUSION_PROOF} can be checked: no key directory supplied`);
  const verifiers = keyring.logs.get(seal.log) ?? [];
  if (!verifiers.length) {
    return unchecked(4, `${NO_INCLUSION_PROOF} can be checked: no log key for '${seal.log}' in the directory: ${STALE_DIRECTORY}`);
  }
  const { checkpoint, note, proof } = opened;
  if (checkpoint.origin !== seal.log) return failed(4, `the checkpoint is of '${checkpoint.origin}', not of '${seal.log}'`);
  let verified;
  try {
    verified = await verifyNote(note, verifiers);
  } catch (error) {
    if (!(error instanceof TlogError)) throw error;
    return failed(4, `the checkpoint's log signature is refused (${error.code}): ${error.message}`);
  }
  if (proof.index < 1n) return failed(4, "index 0 of a log is its tenant genesis root, never a record");
  try {
    await verifyInclusion(canonical, proof.index, checkpoint.size, proof.hashes, checkpoint.rootHash);
  } catch (error) {
    if (!(error instanceof CommitError)) throw error;
    return failed(4, `the header is not entry ${proof.index} of the checkpoint: ${error.message}`);
  }
  const problem = checkpointProblem(seal.log, verified, keyring, witnessed);
  if (problem !== null) {
    if (problem[0] === "failed") return failed(4, problem[1]);
    const pending = unchecked(4, problem[1]);
    TOKEN_PENDING.add(pending);
    return pending;
  }
  const signed = signedAlgorithms(verified);
  const missing = required.filter((algorithm) => !signed.has(algorithm)); // rule 4.9
  if (missing.length) {
    return unchecked(4, `${NO_INCLUSION_PROOF} can be checked as the trust store requires (${missing.join(" and ")}` +
      ` signatures): ${unsignedReasons(seal.log, missing, verifiers)}`);
  }
  return passed(4, `entry ${proof.index} of ${seal.log} in its checkpoint of size ${checkpoint.size}` +
    ` (signed with ${[...signed].sort().join(" and ")})`);
}

// --- 5. witness receipts -------------------------------------------------------------------

/** The trusted witness times on the sealing checkpoint (its own cosignatures, and those of the
 * aggregate checkpoint that includes it), the trusted receipts that fail, and the listed
 * authorities whose tokens this verifier does not check. */
async function gatherReceipts(seal, opened, policy, maxTimestamp, keyring) {
  if (seal === null || !opened || opened instanceof BundleError || policy === null) return null;
  const { times, problems } = await cosignatureTimes(opened.note.text, opened.note.signatures, policy, maxTimestamp);
  const through = await aggregateTimes(seal, opened, keyring, policy, maxTimestamp);
  const tokens = seal.timestamps.filter((receipt) => policy.authorities.has(receipt.authority));
  return {
    times: [...times, ...through.times],
    problems: [...problems, ...through.problems],
    tokens: [...new Set(tokens.map((receipt) => receipt.authority))],
    aggregateMissing: through.missing,
    aggregateWhere: through.where,
  };
}

function checkWitnessReceipts(seal, opened, policy, receipts) {
  if (seal === null || opened === null) return unchecked(5, `${NO_RECEIPTS}: the record is not sealed yet`);
  if (opened instanceof BundleError) return unchecked(5, "not run: the seal's proof does not parse (check 4)");
  if (policy === null || receipts === null) return unchecked(5, `${NO_RECEIPTS} can be checked: no trust store supplied`);
  // Whatever the outcome, the detail says which tokens were not checked (docs/bundle.md).
  const tokens = receipts.tokens.length
    ? ` [RFC 3161 ${plural(receipts.tokens.length, "token")} of ${receipts.tokens.join(", ")} not checked in the browser]`
    : "";
  if (receipts.problems.length) return failed(5, joined(receipts.problems) + tokens);
  const vouching = [...new Set(receipts.times.map((time) => time.by))].sort();
  // Rule 5.9: an aggregate path without its log key adds nothing, and says so.
  const aside = (receipts.aggregateMissing ? ` [${receipts.aggregateMissing}]` : "") + tokens;
  const through = receipts.aggregateWhere ? `, through ${receipts.aggregateWhere}` : "";
  if (!vouching.length) {
    return unchecked(5, `${NO_RECEIPTS} from a trusted witness (quorum not met: 0 of ${policy.quorum})${aside}`);
  }
  if (vouching.length < policy.quorum) {
    return unchecked(5, `quorum not met: ${vouching.length} of ${policy.quorum} (${vouching.join(", ")})${through}${aside}`);
  }
  const many = vouching.length !== 1;
  const detail = `${vouching.length} trusted ${many ? "witnesses vouch" : "witness vouches"}`;
  return passed(5, `${detail} (quorum ${policy.quorum}): ${vouching.join(", ")}${through}${aside}`);
}

// --- 6. sequence continuity ----------------------------------------------------------------

/** The spans of low..high missing from the present spans [first, last] (sorted by first). */
function gaps(low, high, present) {
  const found = [];
  let expected = low;
  for (const [first, last] of present) {
    if (first > expected) found.push([expected, Math.min(first - 1, high)]);
    expected = Math.max(expected, last + 1);
  }
  if (expected <= high) found.push([expected, high]);
  return found.filter(([first, last]) => first <= last);
}

function missing(spans) {
  const count = spans.reduce((total, [a, b]) => total + b - a + 1, 0);
  const listed = spans.slice(0, 5).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
  const more = spans.length > 5 ? ` and ${spans.length - 5} more spans` : "";
  return `${plural(count, "sequence")} ${listed}${more} missing from the claimed window`;
}

/** "seqs 3–1002 declared lost on 2026-11-26 (store_rolled_back)": the part of a gap's range
 * inside the window, the UTC date of declared_at, the reason. */
function declaredLost(first, last, gap) {
  const day = new Date(Number(parseInstant(gap.declared_at) / 1000n)).toISOString().slice(0, 10);
  const seqs = first === last ? `seq ${first}` : `seqs ${first}\u2013${last}`;
  return `${seqs} declared lost on ${day} (${gap.reason})`;
}

/** `witnessed`: the record's trusted witness time, only when check 4 passed. */
async function checkSequenceContinuity(header, canonical, coverage, keyring, witnessed) {
  if (coverage === null) return passed(6, "no window claimed");
  const [low, high] = [coverage.from_seq, coverage.to_seq];
  if (low > high) return failed(6, `the claimed window ${low}..${high} is empty`);
  if (!(low <= header.seq && header.seq <= high)) return failed(6, `the record (seq ${header.seq}) is outside the claimed window`);
  const [problems, keyless, present, gapHeaders] = [[], [], [], []];
  const leaves = new Map(); // chain leaves of the covered headers, by seq
  let lastSeq = null;
  const vouched = linkedToRecord(header, coverage.records);
  for (const item of coverage.records) {
    const covered = item.header;
    const where = `seq ${covered.seq}`;
    const coveredCanonical = canonicalOf(covered);
    if (covered.tenant !== header.tenant || covered.stream !== header.stream) problems.push(`${where} is a header of another stream`);
    if (!(low <= covered.seq && covered.seq <= high)) problems.push(`${where} lies outside the claimed window`);
    if (lastSeq !== null && covered.seq <= lastSeq) problems.push(`${where} comes after seq ${lastSeq}: headers out of order`);
    if (covered.seq === header.seq && serialize(covered) !== serialize(header)) problems.push(`${where} is not the record's own header`);
    // A record header links to the one before it; a gap header to the one before its range.
    let linked = covered.seq - 1;
    if (isGap(covered)) {
      gapHeaders.push(covered);
      linked = covered.from_seq - 1;
      if (!(covered.from_seq <= covered.to_seq && covered.to_seq === covered.seq - 1)) {
        problems.push(`${where} declares seqs ${covered.from_seq}..${covered.to_seq} lost, not a range that ends just before it`);
      }
    }
    let expectedPrev = linked === 0 ? await streamGenesis(covered.tenant, covered.stream) : null;
    if (leaves.has(linked)) expectedPrev = leaves.get(linked);
    if (expectedPrev !== null && covered.prev !== toHex(expectedPrev)) {
      problems.push(`${where} does not link to ${linked ? `the header at seq ${linked}` : "the stream genesis"} (prev)`);
    }
    if (keyring !== null) {
      const vouching = vouched.has(covered.seq) ? witnessed : NOT_VOUCHED;
      const problem = await signatureProblem(covered, coveredCanonical, fromHex(item.signature), keyring, vouching);
      if (problem !== null) (problem[0] === "unchecked" ? keyless : problems).push(`${where}: ${problem[1]}`);
    }
    present.push(covered.seq);
    leaves.set(covered.seq, await leafHash(coveredCanonical));
    lastSeq = covered.seq;
  }
  for (const gap of gapHeaders) {
    const inside = [...present, header.seq].filter((seq) => gap.from_seq <= seq && seq <= gap.to_seq);
    if (inside.length) problems.push(`seq ${inside[0]} is present, yet declared lost by seq ${gap.seq}`);
  }
  if (problems.length) return failed(6, joined(problems));
  const lost = gapHeaders.filter((gap) => gap.to_seq >= low).map((gap) => [Math.max(gap.from_seq, low), gap.to_seq, gap]);
  const spans = [...present.map((seq) => [seq, seq]), ...lost.map(([a, b]) => [a, b])]
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const absent = gaps(low, high, spans);
  const reasons = absent.length ? [missing(absent)] : [];
  reasons.push(...lost.map(([first, last, gap]) => declaredLost(first, last, gap)));
  if (keyring === null) reasons.push(`the ${present.length} headers' signatures need the key directory`);
  reasons.push(...keyless);
  if (reasons.length) return unchecked(6, joined(reasons));
  return passed(6, `seq ${low}..${high}: ${present.length} headers, each signed and linked`);
}

// --- 7. verdict and time bracket -----------------------------------------------------------

/** The time bracket {bracket, upper, inverted}: `upper` the witness time the upper bound comes
 * from, `inverted` why the lower bound was dropped ("" when it was not). Witness times are
 * whole seconds, so the upper bound is the end of the witness's second (rule 7.3 when the
 * lower bound is still later). */
function bracketOf(header, included, sealingTimes, previousTimes) {
  const bracket = { not_before: header.ingested_at, not_before_by: HOSTED_INGEST, not_after: null, not_after_by: null };
  let lowerAt = parseInstant(header.ingested_at); // microseconds
  let lower = `the service's ingested_at ${header.ingested_at}`;
  if (previousTimes.length) {
    const latest = previousTimes.reduce((a, b) => (b.at > a.at ? b : a));
    [bracket.not_before, bracket.not_before_by] = [formatSeconds(latest.at), latest.by];
    lowerAt = latest.at * 1_000_000n;
    lower = `${latest.by}'s time on the previous checkpoint ${bracket.not_before}`;
  }
  if (!(included && sealingTimes.length)) return { bracket, upper: null, inverted: "" };
  const first = sealingTimes.reduce((a, b) => (b.at < a.at ? b : a));
  const upperAt = first.at + 1n; // the end of the witness's second
  [bracket.not_after, bracket.not_after_by] = [formatSeconds(upperAt), first.by];
  if (lowerAt !== null && lowerAt > upperAt * 1_000_000n) {
    [bracket.not_before, bracket.not_before_by] = [null, null];
    return { bracket, upper: first, inverted: `${lower} is later than the upper bound` };
  }
  return { bracket, upper: first, inverted: "" };
}

function checkTimeBracket({ bracket, upper, inverted }, included, previousReason) {
  let lower = `not before ${bracket.not_before} (${bracket.not_before_by})`;
  if (inverted) lower = `no lower bound: ${inverted} (the clocks disagree)`;
  else if (bracket.not_before_by === HOSTED_INGEST && previousReason) lower += ` [${previousReason}]`;
  if (!included) return unchecked(7, `${lower}; no trusted upper bound: the seal is not verified`);
  if (upper === null) return unchecked(7, `${lower}; no trusted witness time on the sealing checkpoint`);
  const detail = `${lower}; not after ${bracket.not_after} (${upper.by}: ${upper.how} in the second from ${formatSeconds(upper.at)})`;
  return inverted ? unchecked(7, detail) : passed(7, detail);
}

/** Trusted times on seal.previous, or none and why it cannot be used. Only after check 4
 * passed: the entry's index is then proven, so a smaller checkpoint predates the record. */
async function previousBound(seal, opened, keyring, policy, maxTimestamp) {
  const verifiers = keyring?.logs.get(seal.log) ?? [];
  if (!verifiers.length) return [[], "no log key to check the previous checkpoint"];
  if (seal.previous === null) return [[], "no previous checkpoint in the seal"];
  if (policy === null) return [[], "no trust store for the previous checkpoint's witnesses"];
  let previous, note;
  try {
    note = parseNote(seal.previous);
    await verifyNote(note, verifiers);
    previous = parseCheckpoint(note.text);
  } catch (error) {
    if (!(error instanceof TlogError)) throw error;
    return [[], `the previous checkpoint is not usable (${error.code}): ${error.message}`];
  }
  const sealing = opened.checkpoint;
  if (previous.origin !== sealing.origin) return [[], "the previous checkpoint is of another log"];
  if (previous.size > opened.proof.index) return [[], "the previous checkpoint already includes the entry"];
  const consistency = seal.previous_consistency.map((node) => fromBase64(node) ?? new Uint8Array());
  try {
    await verifyConsistency(previous.size, sealing.size, previous.rootHash, sealing.rootHash, consistency);
  } catch (error) {
    if (!(error instanceof CommitError)) throw error;
    return [[], `the previous checkpoint is not consistent with the sealing one: ${error.message}`];
  }
  const { times } = await cosignatureTimes(note.text, note.signatures, policy, maxTimestamp);
  if (!times.length) return [[], "no trusted witness time on the previous checkpoint"];
  return [times, ""];
}

// --- the whole verification ----------------------------------------------------------------

function verdictOf(checks) {
  if (checks.some((check) => check.status === "failed")) return "FAILED";
  if (checks.every((check) => check.status === "passed")) return "VERIFIED";
  return "VERIFICATION INCOMPLETE";
}

function malformed(reason) {
  const checks = [failed(1, `malformed bundle: ${reason}`)];
  for (let number = 2; number <= 7; number++) checks.push(unchecked(number, "not run: the bundle is malformed"));
  const bracket = { not_before: null, not_before_by: null, not_after: null, not_after_by: null };
  return { format: "recordseal/verification/v1", verdict: "FAILED", checks, time_bracket: bracket, record: null, disclosed: {} };
}

/** Verify a bundle (bytes or text) with an optional keyring (loadKeyDirectory) and policy
 * (loadTrustStore); `now` in POSIX seconds bounds witness times. Never throws on input. */
export async function verifyBundle(data, keyring = null, policy = null, { now = Date.now() / 1000 } = {}) {
  let bundle;
  try {
    bundle = decodeBundle(data);
  } catch (error) {
    if (error instanceof BundleError) return malformed(error.message);
    throw error;
  }
  const { header, seal } = bundle;
  const maxTimestamp = BigInt(Math.floor(now + CLOCK_SKEW_SECONDS));
  const canonical = canonicalOf(header);
  let opened = null;
  if (seal !== null) {
    try {
      opened = openSeal(seal);
    } catch (error) {
      if (!(error instanceof BundleError)) throw error;
      opened = error;
    }
  }
  let receipts;
  try {
    receipts = await gatherReceipts(seal, opened, policy, maxTimestamp, keyring);
  } catch (error) {
    receipts = { times: [], problems: [`internal error: ${error.name}: ${error.message}`], tokens: [] };
  }
  let witnessed;
  if (seal === null) witnessed = notWitnessed("the record is not sealed yet");
  else if (policy === null) witnessed = notWitnessed("no trust store supplied");
  else if (receipts === null) witnessed = notWitnessed("the seal's proof does not parse");
  else witnessed = witnessedOf(receipts.times, receipts.tokens);
  const required = policy?.checkpointSignatures ?? ["Ed25519"];
  const sealed = await guarded(4, () => checkSealedBatch(canonical, seal, opened, keyring, witnessed, required));
  const included = sealed.status === "passed";
  if (!included) {
    // Check 4 is unchecked with the log's key at hand only when a token might clear its log
    // key (rule 4.8 here): the record's witness time is then as open as the seal.
    const pending = TOKEN_PENDING.has(sealed);
    const missing = witnessed.until === null ? witnessed.missing : "the seal is not verified (check 4)";
    witnessed = notWitnessed(missing, pending ? witnessed.tokens : []);
  }
  let [previous, previousReason] = [[], ""];
  if (included) {
    try {
      [previous, previousReason] = await previousBound(seal, opened, keyring, policy, maxTimestamp);
    } catch (error) {
      previousReason = `the previous checkpoint could not be read: ${error.message}`;
    }
  }
  const bracket = bracketOf(header, included, receipts?.times ?? [], previous);
  const checks = [
    await guarded(1, () => checkFieldCommitments(bundle.fields)),
    await guarded(2, () => checkRecordTree(header, bundle.fields)),
    await guarded(3, () =>
      checkHeaderSignature(header, canonical, fromHex(bundle.signature), keyring, "no key directory supplied", witnessed)),
    sealed,
    await guarded(5, () => checkWitnessReceipts(seal, opened, policy, receipts)),
    await guarded(6, () => checkSequenceContinuity(header, canonical, bundle.coverage, keyring, witnessed)),
    await guarded(7, () => checkTimeBracket(bracket, included, previousReason)),
  ];
  const sound = checks[0].status === "passed" && checks[1].status === "passed";
  const disclosed = Object.create(null);
  if (sound) for (const field of bundle.fields) disclosed[field.path] = field.value;
  return {
    format: "recordseal/verification/v1",
    verdict: verdictOf(checks),
    checks,
    time_bracket: bracket.bracket,
    record: { tenant: header.tenant, stream: header.stream, seq: header.seq, record_id: header.record_id },
    disclosed,
  };
}
