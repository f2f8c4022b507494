// Compromised keys (docs/bundle.md, "Compromised keys": rules 3.5, 4.8 and 6.16): a
// transcription of python/recordseal/verify/compromise.py. Whoever holds a leaked key can sign
// anything and date it as they like, so a signature by a key compromised at T proves something
// only of what a trusted witness had seen by T: the end of the second of the earliest trusted
// witness time on the sealing checkpoint (check 7's not_after) must be at most T.

import { formatSeconds, GAP_FORMAT, logKeyName } from "./documents.js";
import { hex8 } from "./notes.js";

const plural = (count, word, many = word + "s") => (count === 1 ? word : many);

/** By when a trusted witness had seen the sealing checkpoint: {until (POSIX seconds: the end of
 * the earliest trusted cosignature's second), by}, or {until: null, missing} saying why nothing
 * shows it; `tokens` names the listed authorities whose RFC 3161 tokens are on it, unchecked
 * here, which might show it earlier. */
export function witnessedOf(times, tokens) {
  if (!times.length) return { until: null, missing: "no trusted witness time on the sealing checkpoint", tokens };
  const first = times.reduce((a, b) => (b.at < a.at ? b : a));
  return { until: first.at + 1n, by: first.by, tokens };
}
export const notWitnessed = (missing, tokens = []) => ({ until: null, missing, tokens });
const describe = (witnessed) =>
  witnessed.until === null ? witnessed.missing : `${witnessed.by} saw it by ${formatSeconds(witnessed.until)}`;
/** Why a covered header signed by a compromised key is not vouched for (rule 6.16). */
export const NOT_VOUCHED = notWitnessed(
  "the bundle's witness time vouches only for the record and the covered headers its chain links reach");

/** [status, reason] when a signature by `signer`, whose key was compromised at `compromisedAt`
 * ([microseconds, text] or null), proves nothing of `what`; null when the key was not
 * compromised or a trusted witness had seen `what` by then. `unchecked`, not `failed`, when a
 * token this verifier does not check might show it (docs/bundle.md, the browser's exception). */
export function compromiseProblem(signer, compromisedAt, witnessed, what) {
  if (compromisedAt === null) return null;
  if (witnessed.until !== null && witnessed.until * 1_000_000n <= compromisedAt[0]) return null;
  const reason = `signed by ${signer} compromised at ${compromisedAt[1]}, and no trusted witness shows ${what}` +
    ` before then (${describe(witnessed)})`;
  if (!witnessed.tokens.length) return ["failed", reason];
  return ["unchecked", `${reason} [RFC 3161 ${plural(witnessed.tokens.length, "token")} of ${witnessed.tokens.join(", ")}` +
    " not checked in the browser]"];
}

/** What a passing check adds when its key was compromised after the witness saw it. */
export const afterCompromise = (compromisedAt, witnessed) =>
  (compromisedAt === null ? "" : `; compromised at ${compromisedAt[1]}, after ${describe(witnessed)}`);

/** Rule 4.8: [status, reason] when the log's verified signatures on the sealing checkpoint
 * prove nothing, or null when one of them is by a key not compromised before a trusted witness
 * saw the checkpoint. */
export function checkpointProblem(origin, signatures, keyring, witnessed) {
  const problems = [];
  for (const signature of signatures) {
    const signer = `log key ${signature.name}+${hex8(signature.keyId)}`;
    const compromisedAt = keyring.compromisedLogs.get(logKeyName(origin, signature)) ?? null;
    const problem = compromiseProblem(signer, compromisedAt, witnessed, "the checkpoint");
    if (problem === null) return null;
    problems.push(problem);
  }
  return [problems[0][0], problems.map(([, reason]) => reason).join("; ")];
}

/** The seqs of the covered headers the record's chain reaches: its own covered header, then
 * each one's predecessor (for a gap header, the seq before its range) while it is covered. The
 * record's witness time vouches for these alone (rule 6.16);
 * the links themselves are rules 6.6, 6.7 and 6.13. */
export function linkedToRecord(header, records) {
  const covered = new Map(records.map((item) => [item.header.seq, item.header]));
  const reached = new Set();
  let seq = header.seq;
  while (covered.has(seq) && !reached.has(seq) && seq <= header.seq) {
    reached.add(seq);
    const found = covered.get(seq);
    seq = (found.format === GAP_FORMAT ? found.from_seq : found.seq) - 1;
  }
  return reached;
}
