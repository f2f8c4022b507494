// The seal's path into the deployment's aggregate log (docs/bundle.md, check 5, rules 5.7 to
// 5.14): a transcription of python/recordseal/verify/aggregate.py. The aggregate's witnesses
// vouch, through its checkpoint, for the sealing checkpoint it includes.

import { concat, sha256, lengthPrefixed } from "./bytes.js";
import { witnessedOf, checkpointProblem } from "./compromise.js";
import { BundleError } from "./documents.js";
import { CommitError } from "./json.js";
import { TlogError, verifyNote } from "./notes.js";
import { verifyInclusion } from "./rfc6962.js";
import { cosignatureTimes, openTlogProof, signedAlgorithms, STALE_DIRECTORY, unsignedReasons } from "./sealing.js";

const HOW = "cosigned the aggregate checkpoint";

/** SHA-256("recordseal-aggregate-entry-v1" ‖ le32(len(origin)) ‖ origin ‖ le64(size) ‖ root):
 * the aggregate's entry for the checkpoint (size, root) of the log `origin`. */
export async function aggregateEntry(origin, size, root) {
  const le64 = new Uint8Array(8);
  new DataView(le64.buffer).setBigUint64(0, BigInt(size), true);
  return sha256(concat("recordseal-aggregate-entry-v1", lengthPrefixed(origin), le64, root));
}

/** Rules 5.7 to 5.14 over seal.aggregate: {times, problems, missing, where} (all empty when
 * the seal has none). */
export async function aggregateTimes(seal, opened, keyring, policy, maxTimestamp) {
  const none = { times: [], problems: [], missing: "", where: "" };
  if (seal.aggregate === null) return none;
  let path;
  try {
    path = openTlogProof(seal.aggregate.proof);
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    return { ...none, problems: [`the aggregate proof is malformed: ${error.message}`] };
  }
  const origin = path.checkpoint.origin;
  if (!seal.log.startsWith(origin + "/")) {
    return { ...none, problems: [`the aggregate log '${origin}' is not the service of '${seal.log}'`] };
  }
  const verifiers = keyring?.logs.get(origin) ?? [];
  if (!verifiers.length) {
    return { ...none, missing: `no log key for the aggregate log '${origin}' in the directory: ${STALE_DIRECTORY}` };
  }
  let verified;
  try {
    verified = await verifyNote(path.note, verifiers);
  } catch (error) {
    if (!(error instanceof TlogError)) throw error;
    return { ...none, problems: [`the aggregate checkpoint's log signature is refused (${error.code}): ${error.message}`] };
  }
  const [sealing, aggregate, index] = [opened.checkpoint, path.checkpoint, path.proof.index];
  const entry = await aggregateEntry(sealing.origin, sealing.size, sealing.rootHash);
  try {
    await verifyInclusion(entry, index, aggregate.size, path.proof.hashes, aggregate.rootHash);
  } catch (error) {
    if (!(error instanceof CommitError)) throw error;
    return { ...none, problems: [`the sealing checkpoint is not entry ${index} of the aggregate checkpoint: ${error.message}`] };
  }
  const { times, problems } = await cosignatureTimes(path.note.text, path.note.signatures, policy, maxTimestamp, HOW);
  if (problems.length) return { ...none, problems: problems.map((p) => `on the aggregate checkpoint, ${p}`) };
  const compromised = checkpointProblem(origin, verified, keyring, witnessedOf(times, []));
  if (compromised !== null) return { ...none, problems: [`the aggregate checkpoint is ${compromised[1]}`] };
  // Rule 5.14: signed as the trust store requires, as the sealing checkpoint (rule 4.9).
  const signed = signedAlgorithms(verified);
  const absent = (policy.checkpointSignatures ?? ["Ed25519"]).filter((algorithm) => !signed.has(algorithm));
  if (absent.length) {
    return {
      ...none,
      missing: `the aggregate checkpoint is not signed as the trust store requires (${absent.join(" and ")}` +
        ` signatures): ${unsignedReasons(origin, absent, verifiers)}`,
    };
  }
  return { ...none, times, where: `the aggregate log ${origin} at size ${aggregate.size}` };
}
