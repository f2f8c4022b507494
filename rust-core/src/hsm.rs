//! Keys held in a hardware security module, through PKCS#11 (the `cryptoki` crate).
//!
//! A key is named by its module (the shared library), its token (label, serial or slot id), the
//! PIN that opens the token and the object's label, as an RFC 7512 `pkcs11:` URI names them
//! (parsed on the Python side, `recordseal.crypto.hsm`). Three kinds of key live there:
//!
//! - Ed25519 signing keys (`CKK_EC_EDWARDS`, `CKM_EDDSA`): the header and log keys;
//! - AES-256 keys (`CKM_AES_GCM`): key-encryption keys that wrap subject keys;
//! - HMAC-SHA-256 keys (`CKK_GENERIC_SECRET`, `CKM_SHA256_HMAC`): the subject index key.
//!
//! Every key is generated inside the module, sensitive and not extractable: its value never
//! leaves it. A process opens each module once (`C_Initialize`) and each token once (one
//! session holds the login); signing on several cores takes a session per thread from a pool.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::error::{Error as CkError, RvError};
use cryptoki::mechanism::aead::GcmParams;
use cryptoki::mechanism::eddsa::{EddsaParams, EddsaSignatureScheme};
use cryptoki::mechanism::Mechanism;
use cryptoki::object::{Attribute, AttributeType, KeyType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::slot::Slot;
use cryptoki::types::AuthPin;

use crate::ingest::HeaderKey;

/// Why a module could not do what was asked. The text names the module's answer, never a PIN
/// or key material.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HsmError(pub String);

impl std::fmt::Display for HsmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HsmError {}

pub type HsmResult<T> = std::result::Result<T, HsmError>;

/// `what` failed: the module's answer by name (`C_Login answered PinIncorrect`), not the
/// paragraph of the PKCS#11 text that `Display` gives.
fn fail(what: &str, error: CkError) -> HsmError {
    match error {
        CkError::Pkcs11(rv, function) => {
            HsmError(format!("{what}: C_{function:?} answered {rv:?}"))
        }
        other => HsmError(format!("{what}: {other}")),
    }
}

/// Which token of a module: the RFC 7512 attributes `token`, `serial` and `slot-id` that a
/// URI gave (each absent one matches any token).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TokenSelector {
    pub label: Option<String>,
    pub serial: Option<String>,
    pub slot_id: Option<u64>,
}

/// The kinds of key recordseal keeps in a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Ed25519,
    Aes256,
    HmacSha256,
}

impl KeyKind {
    pub fn parse(name: &str) -> HsmResult<Self> {
        match name {
            "ed25519" => Ok(KeyKind::Ed25519),
            "aes256" => Ok(KeyKind::Aes256),
            "hmac-sha256" => Ok(KeyKind::HmacSha256),
            other => Err(HsmError(format!("unknown key kind {other:?}"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Ed25519 => "ed25519",
            KeyKind::Aes256 => "aes256",
            KeyKind::HmacSha256 => "hmac-sha256",
        }
    }

    /// The class and key type of the object that does the secret work.
    fn secret_object(self) -> (ObjectClass, KeyType) {
        match self {
            KeyKind::Ed25519 => (ObjectClass::PRIVATE_KEY, KeyType::EC_EDWARDS),
            KeyKind::Aes256 => (ObjectClass::SECRET_KEY, KeyType::AES),
            KeyKind::HmacSha256 => (ObjectClass::SECRET_KEY, KeyType::GENERIC_SECRET),
        }
    }
}

/// DER of the object identifier of Ed25519 (RFC 8410, 1.3.101.112): the curve's `CKA_EC_PARAMS`.
const ED25519_OID: [u8; 5] = [0x06, 0x03, 0x2b, 0x65, 0x70];

/// The tokens this process has opened, by module, token and PIN: one login each.
type TokenKey = (String, TokenSelector);

/// The modules this process has initialised (`C_Initialize` runs once per module and
/// process) and the tokens it has logged in to.
#[derive(Default)]
struct Opened {
    pid: u32,
    modules: HashMap<String, Pkcs11>,
    tokens: HashMap<TokenKey, Arc<Token>>,
}

/// What this process has opened. A child made by `fork` (a server's workers) starts afresh:
/// PKCS#11 forbids using the parent's sessions, so the inherited handles are forgotten (never
/// closed: closing them could end the parent's sessions in a module that shares them), and the
/// child initialises the module and logs in again.
fn opened() -> std::sync::MutexGuard<'static, Opened> {
    static OPENED: OnceLock<Mutex<Opened>> = OnceLock::new();
    let mut opened = OPENED
        .get_or_init(|| Mutex::new(Opened::default()))
        .lock()
        .expect("module table");
    let pid = std::process::id();
    if opened.pid != pid {
        std::mem::forget(std::mem::take(&mut opened.modules));
        std::mem::forget(std::mem::take(&mut opened.tokens));
        opened.pid = pid;
    }
    opened
}

fn module(opened: &mut Opened, path: &str) -> HsmResult<Pkcs11> {
    if let Some(found) = opened.modules.get(path) {
        return Ok(found.clone());
    }
    let pkcs11 = Pkcs11::new(path).map_err(|e| fail(&format!("loading module {path}"), e))?;
    initialise(&pkcs11, path)?;
    opened.modules.insert(path.to_owned(), pkcs11.clone());
    Ok(pkcs11)
}

fn initialise(pkcs11: &Pkcs11, path: &str) -> HsmResult<()> {
    match pkcs11.initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK)) {
        Ok(()) | Err(CkError::Pkcs11(RvError::CryptokiAlreadyInitialized, _)) => Ok(()),
        Err(e) => Err(fail(&format!("initialising module {path}"), e)),
    }
}

/// One token of a module, logged in as its user.
pub struct Token {
    pkcs11: Pkcs11,
    slot: Slot,
    /// The process that logged in: a child made by `fork` must open the token again.
    pid: u32,
    /// Sessions not in use; the login lasts while any session of the token is open, and this
    /// pool always keeps one.
    idle: Mutex<Vec<Session>>,
}

impl Token {
    /// The token `selector` names in the module at `module_path`, logged in with `pin` (the
    /// same token opened again is the same `Token`).
    pub fn open(module_path: &str, selector: &TokenSelector, pin: &str) -> HsmResult<Arc<Token>> {
        let key = (module_path.to_owned(), selector.clone());
        let mut opened = opened();
        if let Some(token) = opened.tokens.get(&key) {
            return Ok(token.clone());
        }
        let pkcs11 = module(&mut opened, module_path)?;
        let mut attempt = 1;
        let (slot, session) = loop {
            match log_in(&pkcs11, selector, pin) {
                Ok(opened) => break opened,
                Err(failure) if failure.passing && attempt < OPEN_ATTEMPTS => {
                    std::thread::sleep(std::time::Duration::from_millis(20 << attempt.min(4)));
                    // SoftHSM reads its tokens at C_Initialize, and one it read half-written
                    // stays missing until the module starts again: restart it, unless another
                    // token of it is open in this process (its sessions would end).
                    if !opened.tokens.keys().any(|(path, _)| path == module_path) {
                        let _ = pkcs11.clone().finalize();
                        initialise(&pkcs11, module_path)?;
                    }
                    attempt += 1;
                }
                Err(failure) => return Err(failure.error),
            }
        };
        let token = Arc::new(Token {
            pkcs11,
            slot,
            pid: opened.pid,
            idle: Mutex::new(vec![session]),
        });
        opened.tokens.insert(key, token.clone());
        Ok(token)
    }

    /// Runs `work` with a session of its own (taken from the pool, or a new one).
    fn with_session<T>(&self, work: impl FnOnce(&Session) -> HsmResult<T>) -> HsmResult<T> {
        if self.pid != std::process::id() {
            return Err(HsmError(format!(
                "this key was opened by process {} before a fork: open it again in this process",
                self.pid
            )));
        }
        let taken = self.idle.lock().expect("session pool").pop();
        let session = match taken {
            Some(session) => session,
            None => self
                .pkcs11
                .open_rw_session(self.slot)
                .map_err(|e| fail("opening a session", e))?,
        };
        let result = work(&session);
        self.idle.lock().expect("session pool").push(session);
        result
    }

    fn find(&self, session: &Session, label: &str, kind: KeyKind) -> HsmResult<ObjectHandle> {
        let (class, key_type) = kind.secret_object();
        let found = session
            .find_objects(&[
                Attribute::Class(class),
                Attribute::KeyType(key_type),
                Attribute::Label(label.as_bytes().to_vec()),
            ])
            .map_err(|e| fail("finding the key", e))?;
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(HsmError(format!(
                "the token has no {} key labelled {label:?}",
                kind.name()
            ))),
            _ => Err(HsmError(format!(
                "the token has {} {} keys labelled {label:?}: a label names one key",
                found.len(),
                kind.name()
            ))),
        }
    }

    /// The key labelled `label`, of `kind`.
    pub fn key(self: &Arc<Self>, label: &str, kind: KeyKind) -> HsmResult<ModuleKey> {
        let handle = self.with_session(|session| self.find(session, label, kind))?;
        Ok(ModuleKey {
            token: self.clone(),
            handle,
            label: label.to_owned(),
        })
    }

    /// Whether any object is labelled `label`.
    pub fn has(&self, label: &str) -> HsmResult<bool> {
        self.with_session(|session| {
            let found = session
                .find_objects(&[Attribute::Label(label.as_bytes().to_vec())])
                .map_err(|e| fail("finding objects", e))?;
            Ok(!found.is_empty())
        })
    }

    /// Generates a key of `kind` labelled `label` inside the module (sensitive, not
    /// extractable). Refuses a label already in use.
    pub fn generate(self: &Arc<Self>, label: &str, kind: KeyKind) -> HsmResult<ModuleKey> {
        if self.has(label)? {
            return Err(HsmError(format!(
                "the token already holds an object labelled {label:?}"
            )));
        }
        let name = Attribute::Label(label.as_bytes().to_vec());
        let secret = |usage: Vec<Attribute>| {
            let mut template = vec![
                Attribute::Token(true),
                Attribute::Private(true),
                Attribute::Sensitive(true),
                Attribute::Extractable(false),
                name.clone(),
            ];
            template.extend(usage);
            template
        };
        let handle = self.with_session(|session| match kind {
            KeyKind::Ed25519 => {
                let public = [
                    Attribute::Token(true),
                    Attribute::Private(false),
                    Attribute::Verify(true),
                    Attribute::EcParams(ED25519_OID.to_vec()),
                    name.clone(),
                ];
                let (_, private) = session
                    .generate_key_pair(
                        &Mechanism::EccEdwardsKeyPairGen,
                        &public,
                        &secret(vec![Attribute::Sign(true)]),
                    )
                    .map_err(|e| fail("generating an Ed25519 key pair", e))?;
                Ok(private)
            }
            KeyKind::Aes256 => session
                .generate_key(
                    &Mechanism::AesKeyGen,
                    &secret(vec![
                        Attribute::ValueLen(32.into()),
                        Attribute::Encrypt(true),
                        Attribute::Decrypt(true),
                    ]),
                )
                .map_err(|e| fail("generating an AES-256 key", e)),
            KeyKind::HmacSha256 => session
                .generate_key(
                    &Mechanism::GenericSecretKeyGen,
                    &secret(vec![
                        Attribute::KeyType(KeyType::GENERIC_SECRET),
                        Attribute::ValueLen(32.into()),
                        Attribute::Sign(true),
                        Attribute::Verify(true),
                    ]),
                )
                .map_err(|e| fail("generating an HMAC key", e)),
        })?;
        Ok(ModuleKey {
            token: self.clone(),
            handle,
            label: label.to_owned(),
        })
    }

    /// Destroys every object labelled `label` (both halves of a key pair); how many.
    pub fn destroy(&self, label: &str) -> HsmResult<usize> {
        self.with_session(|session| {
            let found = session
                .find_objects(&[Attribute::Label(label.as_bytes().to_vec())])
                .map_err(|e| fail("finding objects", e))?;
            for object in &found {
                session
                    .destroy_object(*object)
                    .map_err(|e| fail("destroying the key", e))?;
            }
            Ok(found.len())
        })
    }
}

/// How many times opening a token is tried while the module's answer may be passing. SoftHSM
/// (a store of files) rewrites its token file at every login, and another process reading the
/// token meanwhile meets `CKR_GENERAL_ERROR`, a token that looks uninitialised, or one whose
/// user PIN looks unset (`CKR_USER_PIN_NOT_INITIALIZED` at login): a server's workers,
/// starting together, did one time in six (tests/crypto/test_hsm.py). Eight attempts
/// wait 1.6 s at most in all; a wrong PIN is never tried again (each try counts against it).
const OPEN_ATTEMPTS: u32 = 8;

/// Why opening a token failed, and whether trying again may pass.
struct OpenFailure {
    error: HsmError,
    passing: bool,
}

impl OpenFailure {
    fn module(what: &str, error: CkError) -> Self {
        let passing = matches!(
            error,
            CkError::Pkcs11(
                RvError::GeneralError | RvError::DeviceError | RvError::UserPinNotInitialized,
                _
            )
        );
        OpenFailure {
            error: fail(what, error),
            passing,
        }
    }
}

/// One try at the token `selector` names: its slot and a session logged in with `pin`.
fn log_in(
    pkcs11: &Pkcs11,
    selector: &TokenSelector,
    pin: &str,
) -> std::result::Result<(Slot, Session), OpenFailure> {
    let slot = find_slot(pkcs11, selector)?;
    let session = pkcs11
        .open_rw_session(slot)
        .map_err(|e| OpenFailure::module("opening a session", e))?;
    match session.login(UserType::User, Some(&AuthPin::from(pin))) {
        Ok(()) | Err(CkError::Pkcs11(RvError::UserAlreadyLoggedIn, _)) => Ok((slot, session)),
        Err(e) => Err(OpenFailure::module("logging in to the token", e)),
    }
}

/// The one initialised token `selector` matches. None matching may be passing too (a token
/// read while another process rewrites it looks uninitialised); several matching is not.
fn find_slot(pkcs11: &Pkcs11, selector: &TokenSelector) -> std::result::Result<Slot, OpenFailure> {
    let slots = pkcs11
        .get_slots_with_initialized_token()
        .map_err(|e| OpenFailure::module("listing the module's tokens", e))?;
    let mut matching = Vec::new();
    for slot in slots {
        if selector.slot_id.is_some_and(|id| id != slot.id()) {
            continue;
        }
        let info = pkcs11
            .get_token_info(slot)
            .map_err(|e| OpenFailure::module("reading a token's information", e))?;
        let label_ok = selector.label.as_deref().is_none_or(|l| info.label() == l);
        let serial_ok = selector
            .serial
            .as_deref()
            .is_none_or(|s| info.serial_number() == s);
        if label_ok && serial_ok {
            matching.push(slot);
        }
    }
    match matching.as_slice() {
        [one] => Ok(*one),
        [] => Err(OpenFailure {
            error: HsmError(format!(
                "no initialised token of the module matches {}",
                describe(selector)
            )),
            passing: true,
        }),
        _ => Err(OpenFailure {
            error: HsmError(format!(
                "{} tokens match {}: name one by token, serial or slot-id",
                matching.len(),
                describe(selector)
            )),
            passing: false,
        }),
    }
}

fn describe(selector: &TokenSelector) -> String {
    let mut parts = Vec::new();
    if let Some(label) = &selector.label {
        parts.push(format!("token={label}"));
    }
    if let Some(serial) = &selector.serial {
        parts.push(format!("serial={serial}"));
    }
    if let Some(id) = selector.slot_id {
        parts.push(format!("slot-id={id}"));
    }
    if parts.is_empty() {
        "any token".to_owned()
    } else {
        parts.join(";")
    }
}

/// One key in a module.
pub struct ModuleKey {
    token: Arc<Token>,
    handle: ObjectHandle,
    label: String,
}

impl ModuleKey {
    /// The 32-byte public key of an Ed25519 key (read from its public half).
    pub fn ed25519_public(&self) -> HsmResult<[u8; 32]> {
        self.token.with_session(|session| {
            let public = session
                .find_objects(&[
                    Attribute::Class(ObjectClass::PUBLIC_KEY),
                    Attribute::KeyType(KeyType::EC_EDWARDS),
                    Attribute::Label(self.label.as_bytes().to_vec()),
                ])
                .map_err(|e| fail("finding the public key", e))?;
            let [public] = public.as_slice() else {
                return Err(HsmError(format!(
                    "the token has no single Ed25519 public key labelled {:?}",
                    self.label
                )));
            };
            let attributes = session
                .get_attributes(*public, &[AttributeType::EcPoint])
                .map_err(|e| fail("reading the public key", e))?;
            let point = attributes
                .into_iter()
                .find_map(|attribute| match attribute {
                    Attribute::EcPoint(point) => Some(point),
                    _ => None,
                });
            point
                .and_then(|point| ec_point(&point))
                .ok_or_else(|| HsmError("the public key's CKA_EC_POINT is not 32 bytes".into()))
        })
    }

    /// The Ed25519 signature of `message` (pure Ed25519, RFC 8032).
    pub fn sign_ed25519(&self, message: &[u8]) -> HsmResult<[u8; 64]> {
        let mechanism = Mechanism::Eddsa(EddsaParams::new(EddsaSignatureScheme::Pure));
        let signature = self.token.with_session(|session| {
            session
                .sign(&mechanism, self.handle, message)
                .map_err(|e| fail("signing", e))
        })?;
        signature
            .try_into()
            .map_err(|_| HsmError("the module's Ed25519 signature is not 64 bytes".into()))
    }

    /// AES-256-GCM encryption of `plaintext` under `nonce` (12 bytes) and `aad`: the
    /// ciphertext with its 16-byte tag, as `cryptography`'s `AESGCM.encrypt`.
    pub fn encrypt_gcm(&self, nonce: &[u8], plaintext: &[u8], aad: &[u8]) -> HsmResult<Vec<u8>> {
        let mut iv = nonce.to_vec();
        let params = GcmParams::new(&mut iv, aad, 128.into()).map_err(|e| fail("GCM", e))?;
        self.token.with_session(|session| {
            session
                .encrypt(&Mechanism::AesGcm(params), self.handle, plaintext)
                .map_err(|e| fail("encrypting", e))
        })
    }

    /// The plaintext of `sealed` (ciphertext and tag), or `Ok(None)` when it fails to
    /// authenticate under this key, `nonce` and `aad`.
    pub fn decrypt_gcm(
        &self,
        nonce: &[u8],
        sealed: &[u8],
        aad: &[u8],
    ) -> HsmResult<Option<Vec<u8>>> {
        let mut iv = nonce.to_vec();
        let params = GcmParams::new(&mut iv, aad, 128.into()).map_err(|e| fail("GCM", e))?;
        self.token.with_session(|session| {
            match session.decrypt(&Mechanism::AesGcm(params), self.handle, sealed) {
                Ok(plain) => Ok(Some(plain)),
                // A tag that does not match: PKCS#11 says CKR_ENCRYPTED_DATA_INVALID, SoftHSM
                // answers CKR_GENERAL_ERROR (its OpenSSL `EVP_DecryptFinal` failed). Either way
                // the caller learns only that the key did not open these bytes.
                Err(CkError::Pkcs11(
                    RvError::EncryptedDataInvalid
                    | RvError::EncryptedDataLenRange
                    | RvError::GeneralError,
                    _,
                )) => Ok(None),
                Err(e) => Err(fail("decrypting", e)),
            }
        })
    }

    /// HMAC-SHA-256 of `message`.
    pub fn hmac_sha256(&self, message: &[u8]) -> HsmResult<[u8; 32]> {
        let mac = self.token.with_session(|session| {
            session
                .sign(&Mechanism::Sha256Hmac, self.handle, message)
                .map_err(|e| fail("computing an HMAC", e))
        })?;
        mac.try_into()
            .map_err(|_| HsmError("the module's HMAC-SHA-256 is not 32 bytes".into()))
    }
}

/// The 32 bytes of an Edwards point as `CKA_EC_POINT` holds it: raw, or (as SoftHSM and the
/// PKCS#11 3.0 text have it) a DER OCTET STRING around them.
fn ec_point(point: &[u8]) -> Option<[u8; 32]> {
    match point {
        [0x04, 32, rest @ ..] if rest.len() == 32 => rest.try_into().ok(),
        raw if raw.len() == 32 => raw.try_into().ok(),
        _ => None,
    }
}

impl HeaderKey for ModuleKey {
    fn sign_message(&self, message: &[u8]) -> std::result::Result<[u8; 64], String> {
        self.sign_ed25519(message).map_err(|e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::ec_point;

    #[test]
    fn an_edwards_point_is_read_raw_or_as_a_der_octet_string() {
        let raw = [7u8; 32];
        let mut der = vec![0x04, 32];
        der.extend_from_slice(&raw);
        assert_eq!(ec_point(&raw), Some(raw));
        assert_eq!(ec_point(&der), Some(raw));
        assert_eq!(ec_point(&der[..33]), None);
        assert_eq!(ec_point(&[0x03, 32]), None);
    }
}
