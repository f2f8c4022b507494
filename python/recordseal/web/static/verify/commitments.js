// Committed paths, salts, field commitments and whole records (docs/spec.md sections 2, 4, 6).
// The verifier needs pathProblem and commitField; deriveSalt and commitRecord are the rest of
// the construction, held to the shared record vectors.

import { concat, hmacSha256, sha256, utf8 } from "./bytes.js";
import { CommitError, decodeUtf8, escapeToken, parse, serialize } from "./json.js";
import { encodeValue, KINDS } from "./kinds.js";
import { merkleRoot } from "./rfc6962.js";

export const MAX_PATH_BYTES = 512;
export const MAX_PAYLOAD_BYTES = 262144;
export const MAX_FIELDS = 4096;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Order of UTF-8 bytes (unsigned, shorter prefix first). */
export function compareUtf8(a, b) {
  const [x, y] = [utf8(a), utf8(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** Why `path` is not a committed path the core can have produced, or null. */
export function pathProblem(path) {
  if (!path.isWellFormed()) return "is not valid UTF-8";
  const size = utf8(path).length;
  if (size > MAX_PATH_BYTES) return `is ${size} bytes long, over ${MAX_PATH_BYTES}`;
  const colon = path.indexOf(":");
  const [vector, pointer] = colon < 0 ? [path, ""] : [path.slice(0, colon), path.slice(colon + 1)];
  if (colon < 0 || !/^[oa]+$/.test(vector)) {
    return "does not start with a vector of 'o' and 'a' steps and a colon";
  }
  if (vector[0] !== "o") return "does not start with an object member (a payload is an object)";
  if (!pointer.startsWith("/")) return "has no JSON Pointer after the colon";
  const steps = pointer.slice(1).split("/");
  if (steps.length !== vector.length) {
    return `has ${steps.length} pointer steps for a vector of ${vector.length}`;
  }
  for (const [i, step] of steps.entries()) {
    if (vector[i] === "a" && !/^(?:0|[1-9][0-9]*)$/.test(step)) {
      return `has the array step '${step}', not an index without leading zeros`;
    }
    if (vector[i] === "o" && !/^(?:[^~]|~[01])*$/.test(step)) {
      return "has a '~' not followed by '0' or '1'";
    }
    if (CONTROL.test(step)) return "has a control character in a member name";
  }
  return null;
}

/** HMAC-SHA-256(salt_key, "recordseal/salt/v1" ‖ 0 ‖ record_id ‖ 0 ‖ path). */
export function deriveSalt(saltKey, recordId, path) {
  return hmacSha256(saltKey, "recordseal/salt/v1", [0], recordId, [0], path);
}

/** SHA-256("recordseal/field/v1" ‖ path ‖ 0 ‖ salt ‖ 0 ‖ enc(value)). */
export function commitField(path, salt, encoded) {
  return sha256("recordseal/field/v1", path, new Uint8Array([0]), salt, new Uint8Array([0]), encoded);
}

const MEMBER_TOKEN = /^(?:[^~\u0000-\u001f\u007f-\u009f]|~[01])*$/;

function isPattern(pattern) {
  const colon = pattern.indexOf(":");
  if (colon < 0 || !pattern.isWellFormed()) return false;
  const [vector, pointer] = [pattern.slice(0, colon), pattern.slice(colon + 1)];
  const steps = pointer.split("/").slice(1);
  return (
    pointer.startsWith("/") &&
    vector.length === steps.length &&
    steps.every((step, i) =>
      vector[i] === "a" ? step === "*" : vector[i] === "o" && MEMBER_TOKEN.test(step),
    ) &&
    utf8(pattern).length <= MAX_PATH_BYTES
  );
}

/** Declarations (spec 6.1), checked in the UTF-8 order of their patterns. */
export function validateDeclarations(declarations) {
  for (const pattern of Object.keys(declarations).sort(compareUtf8)) {
    if (!isPattern(pattern)) throw new CommitError("declaration_invalid", "not a path pattern", pattern);
    if (!KINDS.includes(declarations[pattern])) {
      throw new CommitError("unknown_kind", `pattern ${pattern} names an unknown kind`, pattern);
    }
  }
}

function checkSaltInputs(saltKey, recordId) {
  if (saltKey.length !== 32) throw new CommitError("salt_key_invalid", "the salt key is not 32 bytes");
  if (!recordId || recordId.includes("\u0000") || !recordId.isWellFormed()) {
    throw new CommitError("record_id_invalid", "record id must be non-empty UTF-8 text without U+0000");
  }
}

/** Spec 6.2 step 5: every value in canonical order, each before its children. */
function walk(document, declared, strict) {
  const fields = [];
  const visit = (value, path, pattern, name, freeAbove) => {
    if (name !== null && CONTROL.test(name)) {
      throw new CommitError("control_character", "a member name has a control character", path);
    }
    if (utf8(path).length > MAX_PATH_BYTES) {
      throw new CommitError("path_too_long", `committed path is longer than ${MAX_PATH_BYTES} bytes`, path);
    }
    const kind = Object.hasOwn(declared, pattern) ? declared[pattern] : null;
    const container = value !== null && typeof value === "object";
    if (container && (Array.isArray(value) ? value.length : Object.keys(value).length)) {
      if (kind !== null && kind !== "free") {
        throw new CommitError("value_type", `${path} is declared ${kind}`, path);
      }
      children(value, path, pattern, freeAbove || kind === "free");
      return;
    }
    if (fields.length === MAX_FIELDS) {
      throw new CommitError("too_many_fields", `a record commits at most ${MAX_FIELDS} fields`);
    }
    if (strict && kind === null && !freeAbove) {
      throw new CommitError("undeclared_field", `${path} is not declared`, path);
    }
    fields.push([path, kind ?? "free", encodeValue(kind ?? "free", value, path)]);
  };
  const children = (container, path, pattern, freeAbove) => {
    const colon = path.indexOf(":");
    const [vector, pointer] = [path.slice(0, colon), path.slice(colon + 1)];
    const patternPointer = pattern.slice(pattern.indexOf(":") + 1);
    if (Array.isArray(container)) {
      container.forEach((element, index) => {
        const at = `${vector}a:${pointer}/${index}`;
        visit(element, at, `${vector}a:${patternPointer}/*`, null, freeAbove);
      });
    } else {
      for (const name of Object.keys(container).sort()) {
        const token = "/" + escapeToken(name);
        const at = `${vector}o:${pointer}${token}`;
        visit(container[name], at, `${vector}o:${patternPointer}${token}`, name, freeAbove);
      }
    }
  };
  children(document, ":", ":", false);
  return fields;
}

/** commit_record of docs/spec.md 6: {canonical, leaves, root, fieldCount}; CommitError. */
export async function commitRecord(payload, declarations, strict, saltKey, recordId) {
  if (payload.length > MAX_PAYLOAD_BYTES) {
    throw new CommitError("payload_too_large", `payload over ${MAX_PAYLOAD_BYTES} bytes`);
  }
  const declared = declarations ?? {};
  validateDeclarations(declared);
  checkSaltInputs(saltKey, recordId);
  const document = parse(decodeUtf8(payload));
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw new CommitError("payload_not_object", "the payload must be a JSON object");
  }
  if (Object.keys(document).length === 0) {
    throw new CommitError("payload_empty", "the payload must have at least one member");
  }
  const fields = walk(document, declared, strict).sort((a, b) => compareUtf8(a[0], b[0]));
  const leaves = [];
  for (const [path, kind, encoded] of fields) {
    const salt = await deriveSalt(saltKey, recordId, path);
    leaves.push({ path, kind, encoded, salt, commitment: await commitField(path, salt, encoded) });
  }
  const root = await merkleRoot(leaves.map((leaf) => leaf.commitment));
  return { canonical: serialize(document), leaves, root, fieldCount: leaves.length };
}
