// /verify-record in the browser: read the bundle, the key directory and the trust store
// locally, verify with the modules next to this one, and show the result. Nothing about the
// bundle leaves the page; the only requests this script may make are GET /v1/keys and
// GET /v1/trust, each only when the user ticks the box for it (and the result then says that
// it rests on this service's word). Without WebCrypto Ed25519 and ML-DSA-44 the form keeps
// posting to the server (the fallback for browsers without script).

import { cryptoAvailable, mldsa44Available } from "./bytes.js";
import { verifyBundle } from "./checks.js";
import { BundleError, loadKeyDirectory, loadTrustStore } from "./documents.js";

const $ = (id) => document.getElementById(id);

/** WebCrypto with Ed25519 (headers, logs, witnesses) and ML-DSA-44 (logs and witnesses). */
async function supportsSignatures() {
  if (!cryptoAvailable()) return false;
  try {
    await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
  } catch {
    return false;
  }
  return mldsa44Available();
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

const definitions = (id, pairs) =>
  element("dl", id ? { id } : {}, ...pairs.flatMap(([term, value]) => [element("dt", {}, term), element("dd", {}, value)]));

function table(id, caption, headings, rows) {
  return element("table", { id },
    element("caption", {}, caption),
    element("thead", {}, element("tr", {}, ...headings.map((text) => element("th", { scope: "col" }, text)))),
    element("tbody", {}, ...rows.map((cells) =>
      element("tr", {}, ...cells.map(([text, css]) => element("td", css ? { class: css } : {}, text))))));
}

const when = (moment, by) => (moment === null ? "not established" : `${moment} (by ${by ?? "unknown"})`);

// The words of python/recordseal/verify/report.py (recordseal verify and the server's page say
// the same; docs/bundle.md, "How a result is shown").
const MALFORMED = "malformed bundle: ";
const NO_BRACKET = "none: a bundle that failed proves no time for its record";
const NO_CHECK_RUN = "None of the seven checks was run.";
const HEADER_BRACKET = "Its time bracket is the signed header's: check 7 passed.";

/** Whether the time bracket is shown: for any verdict but FAILED, and for a FAILED one whose
 * check 7 passed (rules 7.1-7.3 hold for the signed header). */
const bracketHolds = (result) => result.verdict !== "FAILED" || result.checks[6].status === "passed";

/** Why the document is not a disclosure bundle at all (a malformed one), else null. */
function notABundle(result) {
  const detail = result.checks[0].detail;
  return result.record === null && detail.startsWith(MALFORMED) ? detail.slice(MALFORMED.length) : null;
}

/** One sentence on the verdict. */
function summary(result) {
  const reason = notABundle(result);
  if (reason !== null) return `This is not a disclosure bundle: ${reason}. ${NO_CHECK_RUN}`;
  if (result.verdict === "FAILED") {
    const failed = result.checks.filter((c) => c.status === "failed").map((c) => `${c.number} (${c.name})`);
    const said = `Check${failed.length > 1 ? "s" : ""} ${failed.join(", ")} failed: the bundle is not what it claims.`;
    return bracketHolds(result) ? `${said} ${HEADER_BRACKET}` : `${said} Time bracket: ${NO_BRACKET}.`;
  }
  if (result.verdict === "VERIFICATION INCOMPLETE") {
    const open = result.checks.filter((c) => c.status === "unchecked").map((c) => String(c.number));
    return `Nothing failed, but check${open.length > 1 ? "s" : ""} ${open.join(", ")} could not be done: see each one's detail.`;
  }
  return "All seven checks passed.";
}

/** The result as the server renders it (same ids), built from text nodes only. */
function render(result) {
  const css = result.verdict === "VERIFICATION INCOMPLETE" ? "INCOMPLETE" : result.verdict;
  const section = element("section", { "aria-labelledby": "result-heading", id: "result", "data-verified-in": "browser" },
    element("h2", { id: "result-heading" }, "Result"),
    element("p", { class: "where" }, "Verified in this browser: nothing was sent."),
    element("p", { class: `verdict ${css}`, id: "verdict", role: "status" }, result.verdict),
    element("p", { id: "summary" }, summary(result)));
  if (notABundle(result) !== null) return section;
  if (result.record !== null) {
    const { tenant, stream, seq, record_id: recordId } = result.record;
    section.append(definitions(null, [["Tenant", tenant], ["Stream", stream], ["Sequence number", String(seq)], ["Record id", recordId]]));
  }
  section.append(table("checks", "The seven checks", ["#", "Check", "Status", "Detail"],
    result.checks.map((check) => [[String(check.number)], [check.name], [check.status, check.status], [check.detail, "detail"]])));
  const bracket = result.time_bracket;
  if (bracketHolds(result)) {
    section.append(element("h3", {}, "Time bracket"), definitions("time-bracket", [
      ["Not before", when(bracket.not_before, bracket.not_before_by)],
      ["Not after", when(bracket.not_after, bracket.not_after_by)],
    ]));
  }
  const disclosed = Object.entries(result.disclosed);
  if (disclosed.length) {
    section.append(table("disclosed", "Disclosed fields", ["Path", "Value"],
      disclosed.map(([path, value]) => [[path], [JSON.stringify(value), "value"]])));
  }
  return section;
}

function showError(message) {
  $("result-area").replaceChildren(element("p", { class: "error", role: "alert", id: "input-error" }, message));
}

const readFile = (input) => (input.files.length ? input.files[0].arrayBuffer().then((b) => new Uint8Array(b)) : null);

/** A document this service publishes: fetched without cookies, never from a cache. */
async function fetched(path, what, load) {
  const response = await fetch(path, { credentials: "omit", cache: "no-store" });
  if (!response.ok) throw new BundleError(what, `GET ${path} answered ${response.status}`);
  return load(new Uint8Array(await response.arrayBuffer()));
}

async function keyring() {
  if ($("fetch-keys").checked) return fetched("/v1/keys", "key directory", loadKeyDirectory);
  const data = await readFile($("keys-file"));
  return data === null ? null : loadKeyDirectory(data);
}

async function policy() {
  if ($("fetch-trust").checked) return fetched("/v1/trust", "trust store", loadTrustStore);
  const data = await readFile($("trust-file"));
  return data === null ? null : loadTrustStore(data);
}

/** What the result rests on, when the user took this service's word for some of it. */
function provenance() {
  const fetchedNames = [["fetch-keys", "key directory"], ["fetch-trust", "witness trust store"]]
    .filter(([id]) => $(id).checked).map(([, name]) => name);
  if (!fetchedNames.length) return null;
  return element("p", { class: "warning", id: "provenance" },
    `Checked against this service's own ${fetchedNames.join(" and ")}, fetched from it: ` +
    "trusting this result means trusting this service.");
}

async function verify(event) {
  event.preventDefault();
  // The previous verdict goes at once: it must never stand beside inputs it was not about.
  $("result-area").replaceChildren(element("p", { id: "verifying", role: "status" }, "Verifying…"));
  const text = $("bundle").value;
  if (!text.trim()) return showError("Paste a bundle into the text area, drop a file on it, or pick one first.");
  let keys, trust;
  try {
    [keys, trust] = [await keyring(), await policy()];
  } catch (error) {
    return showError(error instanceof BundleError ? error.message : `The file could not be read: ${error.message}`);
  }
  const result = await verifyBundle(new TextEncoder().encode(text), keys, trust);
  $("server-result")?.remove();
  const section = render(result);
  const said = provenance();
  if (said !== null) section.querySelector(".where").after(said);
  $("result-area").replaceChildren(section);
}

async function loadInto(file) {
  $("bundle").value = await file.text();
}

function wireDrop(target) {
  target.addEventListener("dragover", (event) => {
    event.preventDefault();
    target.classList.add("dropping");
  });
  target.addEventListener("dragleave", () => target.classList.remove("dropping"));
  target.addEventListener("drop", (event) => {
    event.preventDefault();
    target.classList.remove("dropping");
    if (event.dataTransfer.files.length) loadInto(event.dataTransfer.files[0]);
  });
}

async function start() {
  if (!(await supportsSignatures())) {
    $("mode").textContent = "This browser cannot verify here (WebCrypto Ed25519 and ML-DSA-44 need a recent " +
      "browser and a secure context: https or localhost), so the bundle is sent to the server to be verified.";
    return;
  }
  $("mode").textContent = "The bundle is verified in this browser: nothing you paste, drop or pick is sent " +
    "anywhere. Add a key directory and a witness trust store to run every check: as files, or fetched " +
    "from this service if you take its word for them.";
  $("browser-inputs").hidden = false;
  $("bundle-file").addEventListener("change", () => {
    if ($("bundle-file").files.length) loadInto($("bundle-file").files[0]);
  });
  for (const [box, file] of [["fetch-keys", "keys-file"], ["fetch-trust", "trust-file"]]) {
    $(box).addEventListener("change", () => {
      $(file).disabled = $(box).checked;
    });
  }
  wireDrop($("bundle"));
  $("verify-form").addEventListener("submit", verify);
  document.documentElement.dataset.verifier = "browser";
}

start();
