// Bytes as Uint8Array: UTF-8, lowercase hex, strict base64, and the WebCrypto primitives
// (SHA-256, HMAC-SHA-256, Ed25519, ML-DSA-44) that everything else is built on. No
// hand-written crypto.

const encoder = new TextEncoder();

export function utf8(text) {
  return encoder.encode(text);
}

export function concat(...parts) {
  const all = parts.map((part) => (typeof part === "string" ? utf8(part) : part));
  const out = new Uint8Array(all.reduce((size, part) => size + part.length, 0));
  let at = 0;
  for (const part of all) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function equal(a, b) {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

export function toHex(data) {
  return Array.from(data, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Lowercase hex of whole bytes to bytes; null for anything else. */
export function fromHex(text) {
  if (typeof text !== "string" || !/^(?:[0-9a-f]{2})*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function toBase64(data) {
  return btoa(String.fromCharCode(...data));
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Canonical padded base64 (RFC 4648 section 4) to bytes; null for anything else, so every
 * value has exactly one accepted spelling (non-zero padding bits are refused). */
export function fromBase64(text) {
  if (typeof text !== "string" || !BASE64.test(text)) return null;
  const data = Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  return toBase64(data) === text ? data : null;
}

/** Little-endian 4-byte length, then the UTF-8 bytes (genesis preimages). */
export function lengthPrefixed(text) {
  const data = utf8(text);
  const size = new Uint8Array(4);
  new DataView(size.buffer).setUint32(0, data.length, true);
  return concat(size, data);
}

export async function sha256(...parts) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", concat(...parts)));
}

export async function hmacSha256(key, ...parts) {
  const imported = await crypto.subtle.importKey(
    "raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, concat(...parts)));
}

/** True when `signature` is the Ed25519 signature of `message` under the 32-byte key. */
export async function ed25519Verify(publicKey, message, signature) {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, [
      "verify",
    ]);
    return await crypto.subtle.verify({ name: "Ed25519" }, key, signature, message);
  } catch {
    return false; // a point that is not on the curve
  }
}

/** True when `signature` is the ML-DSA-44 signature (FIPS 204, pure, empty context) of
 * `message` under the 1312-byte key; WebCrypto's ML-DSA (Chromium has it). */
export async function mldsa44Verify(publicKey, message, signature) {
  if (publicKey.length !== 1312 || signature.length !== 2420) return false;
  try {
    const key = await crypto.subtle.importKey("raw-public", publicKey, { name: "ML-DSA-44" }, false, [
      "verify",
    ]);
    return await crypto.subtle.verify({ name: "ML-DSA-44" }, key, signature, message);
  } catch (error) {
    if (error?.name === "NotSupportedError") throw error; // no ML-DSA here: not a bad signature
    return false;
  }
}

/** Whether this browser's WebCrypto verifies ML-DSA-44 (page.js falls back to the server
 * when it does not). */
export async function mldsa44Available() {
  try {
    await crypto.subtle.importKey("raw-public", new Uint8Array(1312), { name: "ML-DSA-44" }, false, ["verify"]);
    return true;
  } catch (error) {
    return error?.name !== "NotSupportedError";
  }
}

/** WebCrypto exists only in secure contexts (https, localhost, file). */
export function cryptoAvailable() {
  return Boolean(globalThis.crypto && globalThis.crypto.subtle);
}
