//! Salts and commitments (docs/spec.md section 4).
//!
//! HMAC-SHA-256 is written out here (RFC 2104: `H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m))`) rather than
//! taken from the `hmac` crate, because a record hashes its fields two at a time
//! (`sha256::compress_pair`), which needs the raw inner and outer states. The tests check it
//! against the `hmac` crate.

use crate::error::{Code, Error, Result};
use crate::sha256::{self, Message, Scratch, State, INITIAL};

pub use crate::sha256::Hash;

pub const SALT_KEY_LEN: usize = 32;
const SALT_DOMAIN: &[u8] = b"recordseal/salt/v1";
const FIELD_DOMAIN: &[u8] = b"recordseal/field/v1";

/// Salts and commitments of one record. The key's inner and outer states, and every whole
/// block of the salt message prefix, are compressed once per record.
pub struct FieldHasher {
    inner: State,
    inner_absorbed: u64,
    /// The part of `domain ‖ 0x00 ‖ record_id ‖ 0x00` after its whole blocks.
    inner_tail: Vec<u8>,
    outer: State,
}

/// The salt and commitment of one field.
pub type Committed = (Hash, Hash);

impl FieldHasher {
    pub fn new(salt_key: &[u8], record_id: &str) -> Result<Self> {
        check_salt_key(salt_key)?;
        check_record_id(record_id)?;
        let keyed = |pad: u8| {
            let mut block = [pad; 64];
            block.iter_mut().zip(salt_key).for_each(|(b, k)| *b ^= k);
            let mut state = INITIAL;
            sha2::block_api::compress256(&mut state, &[block]);
            state
        };
        let mut prefix = [SALT_DOMAIN, b"\0", record_id.as_bytes(), b"\0"].concat();
        let whole = prefix.len() / 64 * 64;
        let mut inner = keyed(0x36);
        let (blocks, _) = prefix[..whole].as_chunks::<64>();
        sha2::block_api::compress256(&mut inner, blocks);
        prefix.drain(..whole);
        Ok(FieldHasher {
            inner,
            inner_absorbed: 64 + whole as u64,
            inner_tail: prefix,
            outer: keyed(0x5c),
        })
    }

    fn inner_message<'a>(&'a self, parts: &'a [&'a [u8]; 2]) -> Message<'a> {
        Message {
            state: self.inner,
            absorbed: self.inner_absorbed,
            parts,
        }
    }

    fn outer_message<'a>(&self, parts: &'a [&'a [u8]; 1]) -> Message<'a> {
        Message {
            state: self.outer,
            absorbed: 64,
            parts,
        }
    }

    pub fn salt(&self, path: &str) -> Hash {
        let mut scratch = Scratch::default();
        let inner = sha256::digest(
            &self.inner_message(&[&self.inner_tail, path.as_bytes()]),
            &mut scratch,
        );
        sha256::digest(&self.outer_message(&[&inner]), &mut scratch)
    }

    /// Salts and commitments of `count` fields, `field(i)` giving `(path, enc(value))`,
    /// hashed two fields at a time.
    pub fn commit_fields<'f>(
        &self,
        count: usize,
        field: impl Fn(usize) -> (&'f str, &'f [u8]),
    ) -> Vec<Committed> {
        // Paired fields whose commitment messages have as many blocks leave none to hash
        // alone, so fields are paired in the order of that count.
        let blocks = |i: usize| {
            let (path, encoded) = field(i);
            (FIELD_DOMAIN.len() + path.len() + 34 + encoded.len() + 9).div_ceil(64)
        };
        let mut order: Vec<u32> = (0..count as u32).collect();
        order.sort_by_key(|&i| blocks(i as usize));
        let mut scratch = Scratch::default();
        let mut committed = vec![([0; 32], [0; 32]); count];
        for pair in order.chunks(2) {
            match *pair {
                [a, b] => {
                    let (a, b) = (a as usize, b as usize);
                    (committed[a], committed[b]) =
                        self.commit_pair(&field(a), &field(b), &mut scratch);
                }
                [a] => {
                    let (path, encoded) = field(a as usize);
                    let salt = self.salt(path);
                    committed[a as usize] = (salt, commit_field(path, &salt, encoded));
                }
                _ => unreachable!("chunks of two"),
            }
        }
        committed
    }

    fn commit_pair(
        &self,
        (path_a, encoded_a): &(&str, &[u8]),
        (path_b, encoded_b): &(&str, &[u8]),
        scratch: &mut Scratch,
    ) -> (Committed, Committed) {
        let (inner_a, inner_b) = sha256::digest_pair(
            &self.inner_message(&[&self.inner_tail, path_a.as_bytes()]),
            &self.inner_message(&[&self.inner_tail, path_b.as_bytes()]),
            scratch,
        );
        let (salt_a, salt_b) = sha256::digest_pair(
            &self.outer_message(&[&inner_a]),
            &self.outer_message(&[&inner_b]),
            scratch,
        );
        let (commitment_a, commitment_b) = sha256::digest_pair(
            &Message::new(&field_message(path_a, &salt_a, encoded_a)),
            &Message::new(&field_message(path_b, &salt_b, encoded_b)),
            scratch,
        );
        ((salt_a, commitment_a), (salt_b, commitment_b))
    }
}

fn field_message<'a>(path: &'a str, salt: &'a Hash, encoded: &'a [u8]) -> [&'a [u8]; 6] {
    [FIELD_DOMAIN, path.as_bytes(), b"\0", salt, b"\0", encoded]
}

pub fn check_salt_key(salt_key: &[u8]) -> Result<()> {
    if salt_key.len() == SALT_KEY_LEN {
        Ok(())
    } else {
        Err(Error::new(
            Code::SaltKeyInvalid,
            "the salt key must be exactly 32 bytes",
        ))
    }
}

pub fn check_record_id(record_id: &str) -> Result<()> {
    if record_id.is_empty() || record_id.contains('\0') {
        Err(Error::new(
            Code::RecordIdInvalid,
            "the record id must be a non-empty string without U+0000",
        ))
    } else {
        Ok(())
    }
}

/// `HMAC-SHA-256(salt_key, "recordseal/salt/v1" ‖ 0x00 ‖ record_id ‖ 0x00 ‖ path)`.
pub fn derive_salt(salt_key: &[u8], record_id: &str, path: &str) -> Result<Hash> {
    Ok(FieldHasher::new(salt_key, record_id)?.salt(path))
}

/// `SHA-256("recordseal/field/v1" ‖ path ‖ 0x00 ‖ salt ‖ 0x00 ‖ enc(value))`.
pub fn commit_field(path: &str, salt: &[u8], encoded: &[u8]) -> Hash {
    let parts = [FIELD_DOMAIN, path.as_bytes(), b"\0", salt, b"\0", encoded];
    sha256::digest(&Message::new(&parts), &mut Scratch::default())
}

#[cfg(test)]
mod tests;
