// What the seal proves: its tlog proofs opened, and the trusted witness times on checkpoints:
// a transcription of python/recordseal/verify/sealing.py (RFC 3161 tokens aside: the browser
// does not check them).

import { BundleError } from "./documents.js";
import { ALGORITHMS, parseCheckpoint, parseNote, parseTlogProof, TlogError, verifyCosignature } from "./notes.js";

/** Said of a key or log the directory lacks: the usual cause is a directory older than it. */
export const STALE_DIRECTORY = "if it is newer than the directory, export the directory again (recordseal keys export)" +
  " or use the service's published one (GET /v1/keys)";

/** A tlog proof and the checkpoint inside, parsed (signatures not verified): {proof, note,
 * checkpoint}; BundleError when malformed. The seal's proof, or its path into the aggregate. */
export function openTlogProof(text) {
  let proof;
  try {
    proof = parseTlogProof(text);
  } catch (error) {
    throw new BundleError("tlog proof", error.message);
  }
  try {
    const note = parseNote(proof.checkpoint);
    return { proof, note, checkpoint: parseCheckpoint(note.text) };
  } catch (error) {
    if (!(error instanceof TlogError)) throw error;
    throw new BundleError("tlog proof", `the checkpoint is malformed: ${error.message}`);
  }
}

/** The seal's tlog proof and checkpoint, parsed (signatures not verified); BundleError. */
export const openSeal = (seal) => openTlogProof(seal.proof);

/** Valid trusted cosignatures on a checkpoint as witness times {by, at (seconds), how}, and
 * what is wrong with the trusted ones that do not verify. A cosignature dated 0 states no
 * time (c2sp.org/tlog-cosignature): it is checked like any other, and vouches for nothing. */
export async function cosignatureTimes(text, signatures, policy, maxTimestamp, how = "cosigned") {
  const times = [];
  const problems = [];
  for (const signature of signatures) {
    const found = policy.witnesses.find(
      ({ verifier }) => verifier.name === signature.name && verifier.keyId === signature.keyId,
    );
    if (!found) continue; // the log's own signature, or a witness nobody trusts here
    try {
      const at = await verifyCosignature(text, signature, found.verifier, maxTimestamp);
      if (at !== 0n) times.push({ by: found.name, at, how }); // dated 0: no time stated (rule 5.6)
    } catch (error) {
      if (!(error instanceof TlogError)) throw error;
      problems.push(`the cosignature of ${found.name} does not verify (${error.code}): ${error.message}`);
    }
  }
  return { times, problems };
}

/** The algorithms of the log keys whose signatures on a checkpoint verified (verifyNote's
 * answer): what the trust store's checkpointSignatures is held to (rule 4.9 on the sealing
 * checkpoint, 5.14 on the aggregate's). */
export const signedAlgorithms = (verified) => new Set(verified.map((signature) => ALGORITHMS.get(signature.verifier.type)));

/** Why each required algorithm lacks a log signature: the checkpoint has none by a key of it,
 * or the directory has no key of it for `log`. */
export function unsignedReasons(log, missing, verifiers) {
  const listed = new Set(verifiers.map((verifier) => ALGORITHMS.get(verifier.type)));
  return missing.map((algorithm) => listed.has(algorithm)
    ? `the checkpoint carries no ${algorithm} signature by a log key`
    : `the directory has no ${algorithm} key for '${log}' (${STALE_DIRECTORY})`).join("; ");
}
