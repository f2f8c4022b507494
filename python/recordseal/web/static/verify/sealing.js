// What the seal proves: its tlog proofs opened, and the trusted witness times on checkpoints:
// a transcription of python/recordseal/verify/sealing.py (RFC 3161 tokens aside: the browser
// does not check them).

import { BundleError } from "./documents.js";
import { parseCheckpoint, parseNote, parseTlogProof, TlogError, verifyCosignature } from "./notes.js";

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
