//! The keys derived from a data subject's key (docs/spec.md; DESIGN.md section 3 and 4): the
//! salt key and the payload key, each HKDF-SHA-256 (RFC 5869) of the 32-byte subject key with
//! no salt and its own info string. Same bytes as `cryptography`'s `HKDF` with `salt=None`.

use hkdf::Hkdf;
use sha2::Sha256;

use crate::sha256::Hash;

pub const SUBJECT_KEY_LEN: usize = 32;
pub const SALT_KEY_INFO: &[u8] = b"recordseal/salt-key/v1";
pub const PAYLOAD_KEY_INFO: &[u8] = b"recordseal/payload-key/v1";

/// A subject key that is not [`SUBJECT_KEY_LEN`] bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyLength(pub usize);

impl std::fmt::Display for KeyLength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a subject key is {SUBJECT_KEY_LEN} bytes, not {}",
            self.0
        )
    }
}

impl std::error::Error for KeyLength {}

#[derive(Clone, PartialEq, Eq)]
pub struct SubjectKeys {
    pub salt_key: Hash,
    pub payload_key: Hash,
}

/// Both keys of one subject. HKDF-Extract runs once; each key is one HKDF-Expand block.
pub fn derive(subject_key: &[u8]) -> Result<SubjectKeys, KeyLength> {
    if subject_key.len() != SUBJECT_KEY_LEN {
        return Err(KeyLength(subject_key.len()));
    }
    let [salt_key, payload_key] = expand_each(subject_key, [SALT_KEY_INFO, PAYLOAD_KEY_INFO]);
    Ok(SubjectKeys {
        salt_key,
        payload_key,
    })
}

/// The first 32 bytes of HKDF-SHA-256 (no salt) of `ikm` for each info string.
fn expand_each<const N: usize>(ikm: &[u8], infos: [&[u8]; N]) -> [Hash; N] {
    let hkdf = Hkdf::<Sha256>::new(None, ikm);
    infos.map(|info| {
        let mut key = [0u8; 32];
        hkdf.expand(info, &mut key)
            .expect("32 bytes is one HKDF-SHA-256 block");
        key
    })
}

#[cfg(test)]
mod tests;
