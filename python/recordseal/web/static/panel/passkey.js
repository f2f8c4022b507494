"use strict";
(function () {
  const status = document.getElementById("passkey-status");
  const button = document.querySelector("button[data-ceremony]");
  if (!button) { return; }
  const say = (text) => { status.textContent = text; };
  const toBytes = (text) => {
    const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(b64 + "=".repeat((4 - b64.length % 4) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  };
  const toText = (buffer) => {
    let raw = "";
    new Uint8Array(buffer).forEach((b) => { raw += String.fromCharCode(b); });
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  const post = async (path, body) => {
    const response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    return { ok: response.ok, status: response.status, data: data };
  };
  const descriptors = (list) => (list || []).map((d) => ({ ...d, id: toBytes(d.id) }));
  const common = (credential) => ({
    id: credential.id,
    rawId: toText(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment || undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
  });
  async function register() {
    const start = await post("/login/register/start", { token: button.dataset.token });
    if (!start.ok) { throw new Error((start.data && start.data.detail) || "registration refused (" + start.status + ")"); }
    const options = start.data.options;
    options.challenge = toBytes(options.challenge);
    options.user.id = toBytes(options.user.id);
    options.excludeCredentials = descriptors(options.excludeCredentials);
    const credential = await navigator.credentials.create({ publicKey: options });
    const response = credential.response;
    const body = { ...common(credential), response: {
      clientDataJSON: toText(response.clientDataJSON),
      attestationObject: toText(response.attestationObject),
      transports: response.getTransports ? response.getTransports() : [],
    } };
    return post("/login/register/finish", { state: start.data.state, credential: body });
  }
  async function authenticate() {
    const start = await post("/login/authenticate/start", {});
    if (!start.ok) { throw new Error("sign-in refused (" + start.status + ")"); }
    const options = start.data.options;
    options.challenge = toBytes(options.challenge);
    options.allowCredentials = descriptors(options.allowCredentials);
    const credential = await navigator.credentials.get({ publicKey: options });
    const response = credential.response;
    const body = { ...common(credential), response: {
      clientDataJSON: toText(response.clientDataJSON),
      authenticatorData: toText(response.authenticatorData),
      signature: toText(response.signature),
      userHandle: response.userHandle ? toText(response.userHandle) : undefined,
    } };
    return post("/login/authenticate/finish", { state: start.data.state, credential: body });
  }
  button.addEventListener("click", async () => {
    if (!window.PublicKeyCredential) { say("This browser does not support passkeys."); return; }
    button.disabled = true;
    say("Waiting for your passkey…");
    try {
      const result = button.dataset.ceremony === "register" ? await register() : await authenticate();
      if (result.ok && result.data && result.data.ok) {
        say("Signed in.");
        window.location.assign(result.data.redirect);
        return;
      }
      say((result.data && result.data.detail) || "The passkey was not accepted.");
    } catch (error) {
      say(error && error.message ? error.message : "The passkey ceremony failed.");
    }
    button.disabled = false;
  });
})();
