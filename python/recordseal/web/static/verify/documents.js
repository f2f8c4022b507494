// The verifier's inputs (docs/bundle.md sections 1 and 2), read strictly: RFC 8259 JSON that
// the commitment core accepts, exactly the documented members and types, lowercase hex,
// canonical base64, RFC 3339 instants. Every refusal is one BundleError naming the member.

import { fromBase64, fromHex, sha256, toHex } from "./bytes.js";
import { CommitError, decodeUtf8, JsonNumber, parse } from "./json.js";
import { COSIGNATURE_V1, ED25519, hex8, MLDSA44, parseVkey, TlogError } from "./notes.js";
import { isDate } from "./kinds.js";

export class BundleError extends Error {
  constructor(what, message) {
    super(`${what}: ${message}`);
    this.what = what;
  }
}

// --- instants ------------------------------------------------------------------------------

const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;
const MICROS_PER_DAY = 86_400_000_000n;

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year, month, day) {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const FIRST = BigInt(daysFromCivil(1, 1, 1)) * MICROS_PER_DAY;
const LAST = BigInt(daysFromCivil(10000, 1, 1)) * MICROS_PER_DAY - 1n;

/** An RFC 3339 date-time as UTC microseconds since the epoch (BigInt), or null. Years
 * 0001-9999, no leap second, fraction cut to microseconds: as the Python verifier reads it. */
export function parseInstant(text) {
  const match = typeof text === "string" ? RFC3339.exec(text) : null;
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const [fraction = "0", sign, offsetHour, offsetMinute] = match.slice(7);
  if (year < 1 || !isDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  const micros = BigInt(fraction.slice(0, 6).padEnd(6, "0"));
  let moment = BigInt(daysFromCivil(year, month, day)) * MICROS_PER_DAY +
    BigInt((hour * 60 + minute) * 60 + second) * 1_000_000n + micros;
  if (sign !== undefined) {
    if (+offsetHour > 23 || +offsetMinute > 59) return null;
    const offset = BigInt((+offsetHour * 60 + +offsetMinute) * (sign === "+" ? 1 : -1));
    moment -= offset * 60_000_000n;
    if (moment < FIRST || moment > LAST) return null;
  }
  return moment;
}

/** POSIX seconds as RFC 3339 UTC with Z. */
export function formatSeconds(seconds) {
  return new Date(Number(seconds) * 1000).toISOString().replace(".000Z", "Z");
}

// --- a small strict schema -----------------------------------------------------------------

class SchemaError extends Error {
  constructor(message, at) {
    super(`${message} - at \`${at}\``);
  }
}

function typeName(value) {
  if (value === null) return "null";
  if (value instanceof JsonNumber) return value.integral ? "int" : "float";
  if (Array.isArray(value)) return "array";
  return { string: "str", boolean: "bool", object: "object" }[typeof value];
}

const expected = (name, value, at) => new SchemaError(`Expected \`${name}\`, got \`${typeName(value)}\``, at);

const str = (value, at) => {
  if (typeof value !== "string") throw expected("str", value, at);
  return value;
};
const literal = (text) => (value, at) => {
  if (str(value, at) !== text) throw new SchemaError(`Expected \`'${text}'\``, at);
  return value;
};
const int = (low, high) => (value, at) => {
  if (!(value instanceof JsonNumber) || !value.integral) throw expected("int", value, at);
  if (value.value < low) throw new SchemaError(`Expected \`int\` >= ${low}`, at);
  if (value.value > high) throw new SchemaError(`Expected \`int\` <= ${high}`, at);
  return value.value;
};
const matching = (pattern, name) => (value, at) => {
  if (!pattern.test(str(value, at))) throw new SchemaError(`Expected \`str\` matching ${name}`, at);
  return value;
};
const hex = matching(/^(?:[0-9a-f]{2})*$/, "lowercase hex");
const hex32 = matching(/^[0-9a-f]{64}$/, "64 lowercase hex digits");
const base64 = (value, at) => {
  if (fromBase64(str(value, at)) === null) throw new SchemaError("Expected canonical padded base64", at);
  return value;
};
const instant = (value, at) => {
  if (parseInstant(str(value, at)) === null) throw new SchemaError("Expected an RFC 3339 date-time", at);
  return value;
};
const nullable = (type) => (value, at) => (value === null ? null : type(value, at));
const list = (type) => (value, at) => {
  if (!Array.isArray(value)) throw expected("array", value, at);
  return value.map((item, i) => type(item, `${at}[${i}]`));
};
/** Any JSON value, numbers as plain doubles. */
const any = (value) => {
  if (value instanceof JsonNumber) return value.value;
  if (Array.isArray(value)) return value.map(any);
  if (value !== null && typeof value === "object") {
    const out = Object.create(null);
    for (const name of Object.keys(value)) out[name] = any(value[name]);
    return out;
  }
  return value;
};

/** An object with exactly these members; [type] is required, [type, default] optional. */
const struct = (members) => (value, at) => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw expected("object", value, at);
  }
  const out = {};
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(members, name)) throw new SchemaError(`Object contains unknown field \`${name}\``, at);
    out[name] = members[name][0](value[name], `${at}.${name}`);
  }
  for (const [name, spec] of Object.entries(members)) {
    if (Object.hasOwn(out, name)) continue;
    if (spec.length < 2) throw new SchemaError(`Object missing required field \`${name}\``, at);
    out[name] = structuredClone(spec[1]);
  }
  return out;
};

const SAFE = Number.MAX_SAFE_INTEGER;
const seq = int(1, SAFE);

const Header = struct({
  format: [literal("recordseal/header/v1")], tenant: [str], stream: [str], seq: [seq],
  record_id: [str], record_type: [str], occurred_at: [str], subject_ref: [str],
  root: [hex32], field_count: [int(0, SAFE)], prev: [hex32], key_id: [str],
  ingested_at: [instant], attestation: [str],
});
/** A gap header (docs/records.md, "Gap declarations"): only ever covered, never disclosed. */
const GapHeader = struct({
  format: [literal("recordseal/gap/v1")], tenant: [str], stream: [str], seq: [seq],
  from_seq: [seq], to_seq: [seq], reason: [matching(/^[a-z0-9_]{1,64}$/, "1 to 64 characters of a-z, 0-9 and _")],
  declared_at: [instant], prev: [hex32], key_id: [str], attestation: [str],
});
/** A covered record's header: a gap header when its format says so, else a record header. */
const CoveredHeader = (value, at) =>
  (value !== null && typeof value === "object" && value.format === "recordseal/gap/v1" ? GapHeader : Header)(value, at);
export const GAP_FORMAT = "recordseal/gap/v1";
const DisclosedField = struct({
  path: [str], kind: [str], value: [any], salt: [hex], index: [int(0, SAFE)], proof: [list(hex)],
});
const Seal = struct({
  log: [str], proof: [str], previous: [nullable(str), null],
  previous_consistency: [list(base64), []],
  timestamps: [list(struct({ authority: [str], token: [base64] })), []],
  // Absent, or the path into the aggregate log; never null.
  aggregate: [struct({ proof: [str] }), null],
});
const Coverage = struct({
  from_seq: [seq], to_seq: [seq],
  records: [list(struct({ header: [CoveredHeader], signature: [hex] }))],
});
const Bundle = struct({
  format: [literal("recordseal/bundle/v1")], header: [Header], signature: [hex],
  fields: [list(DisclosedField)], seal: [nullable(Seal), null], coverage: [nullable(Coverage), null],
});
const KeyDirectory = struct({
  format: [literal("recordseal/keys/v1")],
  keys: [list(struct({
    key_id: [str], algorithm: [literal("Ed25519")], public_key: [hex32], not_before: [instant],
    not_after: [nullable(instant), null], revoked_at: [nullable(instant), null],
    compromised_at: [nullable(instant), null],
  }))],
  logs: [list(struct({ origin: [str], vkey: [str], compromised_at: [nullable(instant), null] })), []],
});
/** The algorithms of the log signatures a checkpoint must carry (rule 4.9): one or both,
 * each once. */
const algorithms = (value, at) => {
  if (!Array.isArray(value)) throw expected("array", value, at);
  if (value.length < 1) throw new SchemaError("Expected `array` of length >= 1", at);
  if (value.length > 2) throw new SchemaError("Expected `array` of length <= 2", at);
  value.forEach((item, i) => {
    if (!["Ed25519", "ML-DSA-44"].includes(str(item, `${at}[${i}]`))) {
      throw new SchemaError(`Invalid enum value '${item}'`, `${at}[${i}]`);
    }
  });
  if (new Set(value).size !== value.length) throw new SchemaError("Expected distinct algorithms", at);
  return value;
};
const TrustStore = struct({
  format: [literal("recordseal/trust/v1")],
  witnesses: [list(struct({ name: [str], vkey: [str] })), []],
  timestamp_authorities: [list(struct({ name: [str], roots: [list(str)], intermediates: [list(str), []] })), []],
  quorum: [int(1, Infinity), 1],
  checkpoint_signatures: [algorithms, ["Ed25519"]],
});

/** The JSON path of a committed path, as the Python verifier names members. */
function jsonPath(path) {
  const colon = path.indexOf(":");
  const steps = path.slice(colon + 1).split("/").slice(1);
  return "$" + steps.map((step, i) =>
    path[i] === "a" ? `[${step}]` : "." + step.replaceAll("~1", "/").replaceAll("~0", "~")).join("");
}

/** The documents a verifier is given, by their format: one given for another is named. */
const DOCUMENTS = new Map([
  ["recordseal/bundle/v1", "bundle"], ["recordseal/keys/v1", "key directory"],
  ["recordseal/trust/v1", "trust store"], ["recordseal/verification/v1", "verification result"],
]);

/** The error naming the mix-up when the document is another of the verifier's, else null. */
function otherDocument(document, what) {
  const named = document !== null && typeof document === "object" && !Array.isArray(document) ? document.format : null;
  const found = typeof named === "string" ? DOCUMENTS.get(named) : undefined;
  if (found === undefined || found === what) return null;
  return new BundleError(what, `this is a ${found} (${named}), not a ${what} - at \`$.format\``);
}

function decode(data, schema, what) {
  let document;
  try {
    const text = typeof data === "string" ? data : decodeUtf8(data);
    document = parse(text, { tagged: true });
  } catch (error) {
    if (!(error instanceof CommitError)) throw error;
    const where = error.field ? ` - at \`${jsonPath(error.field)}\`` : "";
    throw new BundleError(what, `not valid JSON (${error.code}: ${error.message})${where}`);
  }
  try {
    return schema(document, "$");
  } catch (error) {
    if (error instanceof SchemaError) throw otherDocument(document, what) ?? new BundleError(what, error.message);
    throw error;
  }
}

export const decodeBundle = (data) => decode(data, Bundle, "bundle");

// --- the key directory and the trust store, compiled --------------------------------------

const instantOf = (text) => (text === null ? null : [parseInstant(text), text]);

/** A key directory file as a keyring: {headerKeys: Map(key_id → key), logs: Map(origin →
 * [note verifier of type 0x01 Ed25519 or 0x06 ML-DSA-44]), compromisedLogs: Map("origin\nname+keyid" → [microseconds, text])};
 * BundleError when a key or vkey is wrong. */
export async function loadKeyDirectory(data) {
  const directory = decode(data, KeyDirectory, "key directory");
  const headerKeys = new Map();
  for (const [position, key] of directory.keys.entries()) {
    const publicKey = fromHex(key.public_key);
    const where = `keys[${position}]`;
    if (toHex(await sha256(publicKey)).slice(0, 16) !== key.key_id) {
      throw new BundleError("key directory", `${where}: key_id ${key.key_id} is not the key ID of its public key`);
    }
    if (headerKeys.has(key.key_id)) throw new BundleError("key directory", `${where}: key ${key.key_id} is listed twice`);
    headerKeys.set(key.key_id, {
      keyId: key.key_id, publicKey,
      notBefore: [parseInstant(key.not_before), key.not_before],
      notAfter: instantOf(key.not_after),
      revokedAt: instantOf(key.revoked_at),
      compromisedAt: instantOf(key.compromised_at),
    });
  }
  const logs = new Map();
  const compromisedLogs = new Map();
  for (const [position, log] of directory.logs.entries()) {
    const verifier = await vkeyOf(log.vkey, [ED25519, MLDSA44], "key directory", `logs[${position}]`);
    logs.set(log.origin, [...(logs.get(log.origin) ?? []), verifier]);
    const compromised = instantOf(log.compromised_at);
    const where = logKeyName(log.origin, verifier);
    // a key listed twice for one log counts as compromised from the earlier time
    const earlier = compromisedLogs.get(where);
    if (compromised !== null && (!earlier || compromised[0] < earlier[0])) compromisedLogs.set(where, compromised);
  }
  return { headerKeys, logs, compromisedLogs };
}

/** The key of a log key in a keyring's compromisedLogs: its log, key name and key ID. */
export const logKeyName = (origin, { name, keyId }) => `${origin}\n${name}+${hex8(keyId)}`;

async function vkeyOf(vkey, type, what, where) {
  try {
    return await parseVkey(vkey, type);
  } catch (error) {
    if (error instanceof TlogError) throw new BundleError(what, `${where}: ${error.message}`);
    throw error;
  }
}

const PEM = /^\s*-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----\s*$/;

/** A trust store file as a policy: {witnesses: [{name, verifier}] (Ed25519 or ML-DSA-44 keys),
 * authorities: Map(name → {roots, intermediates}), quorum, checkpointSignatures (the
 * algorithms rule 4.9 requires)}; BundleError when a vkey or certificate is wrong. The
 * certificates are only checked to be PEM: this verifier does not check RFC 3161 tokens. */
export async function loadTrustStore(data) {
  const store = decode(data, TrustStore, "trust store");
  const witnesses = [];
  for (const [position, witness] of store.witnesses.entries()) {
    const verifier = await vkeyOf(witness.vkey, [COSIGNATURE_V1, MLDSA44], "trust store", `witnesses[${position}]`);
    witnesses.push({ name: witness.name, verifier });
  }
  const authorities = new Map();
  for (const [position, authority] of store.timestamp_authorities.entries()) {
    const where = `timestamp_authorities[${position}]`;
    if (!authority.roots.length) throw new BundleError("trust store", `${where}: no trust root`);
    if (authorities.has(authority.name)) throw new BundleError("trust store", `${where}: '${authority.name}' is listed twice`);
    for (const [kind, pems] of [["roots", authority.roots], ["intermediates", authority.intermediates]]) {
      pems.forEach((pem, i) => {
        const body = PEM.exec(pem);
        if (!body || fromBase64(body[1].replace(/\s+/g, "")) === null) {
          throw new BundleError("trust store", `${where}.${kind}[${i}] is not a PEM certificate`);
        }
      });
    }
    authorities.set(authority.name, authority);
  }
  return { witnesses, authorities, quorum: store.quorum, checkpointSignatures: store.checkpoint_signatures };
}

