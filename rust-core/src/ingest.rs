//! The per-record work of an ingest batch (docs/records.md, "The ingest pipeline"), in two steps:
//!
//! 1. `prepare_batch`: commit each payload (as `leaves::commit_declared`) and seal its
//!    canonical bytes with AES-256-GCM under the subject's payload key;
//! 2. `sign_batch`: give each record its place in its stream (seq and `prev`), build its
//!    RFC 8785 header, sign it with Ed25519 and hash it into the record's chain leaf.
//!
//! Both run on every core (rayon's global pool). Byte formats are those of the Python path:
//! `chain.build_header` + `chain.canonical_header`, `crypto.vault.SubjectKeys`,
//! `crypto.signing.HeaderSigner`.

use std::fmt;

use aes_gcm::aead::{self, AeadInOut, Generate, KeyInit};
use aes_gcm::{Aes256Gcm, Key, Nonce, Tag};
use ed25519_dalek::{Signer, SigningKey};
use rayon::prelude::*;

use crate::commitment::Hash;
use crate::declarations::Declarations;
use crate::error::Result;
use crate::json::Node;
use crate::{jcs, leaves, member_order, merkle, number};

/// `format` of every header.
pub const HEADER_FORMAT: &str = "recordseal/header/v1";
/// `attestation` of every header made by the hosted ingest.
pub const ATTESTATION: &str = "hosted-ingest";
/// Signed bytes are this context, then the canonical header.
pub const HEADER_CONTEXT: &[u8] = b"recordseal/header/v1\0";
pub const NONCE_LEN: usize = 12;
pub const TAG_LEN: usize = 16;

/// Below this many records a batch runs on the calling thread: handing work to the pool
/// costs more than the record.
const PARALLEL_FROM: usize = 2;

/// One record to prepare, borrowed from the caller.
pub struct Input<'a> {
    pub tenant: &'a str,
    pub stream: &'a str,
    pub record_type: &'a str,
    /// Already normalised to UTC by the caller.
    pub occurred_at: &'a str,
    pub subject_ref: &'a str,
    pub record_id: &'a str,
    pub payload: Payload<'a>,
    pub declarations: &'a Declarations<'a>,
    pub strict: bool,
    pub salt_key: &'a [u8],
    pub payload_key: &'a [u8; 32],
}

/// A record's payload: its JSON text as received, or the tree the request's reader parsed
/// it into (src/request.rs) with the size of its text when that was measured.
#[derive(Clone, Copy)]
pub enum Payload<'a> {
    Text(&'a [u8]),
    Tree(&'a Node<'a>, Option<usize>),
}

/// What a record's header says besides its place in the stream and the signing context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderFields {
    pub tenant: String,
    pub stream: String,
    pub record_id: String,
    pub record_type: String,
    pub occurred_at: String,
    pub subject_ref: String,
    pub root: Hash,
    pub field_count: usize,
}

/// An accepted record, waiting for its place in the stream.
#[derive(Debug)]
pub struct Prepared {
    pub fields: HeaderFields,
    /// `nonce ‖ ciphertext ‖ tag` of the canonical payload; the record id is the AAD.
    pub sealed_payload: Vec<u8>,
}

/// Commits and seals one record; a refused payload is the commitment's error.
pub fn prepare(input: &Input<'_>) -> Result<Prepared> {
    let record = match input.payload {
        Payload::Text(text) => leaves::commit_declared(
            text,
            input.declarations,
            input.strict,
            input.salt_key,
            input.record_id,
        ),
        Payload::Tree(tree, len) => leaves::commit_tree(
            tree,
            len,
            input.declarations,
            input.strict,
            input.salt_key,
            input.record_id,
        ),
    }?;
    let sealed_payload = seal_payload(input.payload_key, input.record_id, &record.canonical);
    Ok(Prepared {
        fields: HeaderFields {
            tenant: input.tenant.to_owned(),
            stream: input.stream.to_owned(),
            record_id: input.record_id.to_owned(),
            record_type: input.record_type.to_owned(),
            occurred_at: input.occurred_at.to_owned(),
            subject_ref: input.subject_ref.to_owned(),
            root: record.root,
            field_count: record.field_count(),
        },
        sealed_payload,
    })
}

/// `prepare` of every input, in order, in parallel.
pub fn prepare_batch(inputs: &[Input<'_>]) -> Vec<Result<Prepared>> {
    if inputs.len() < PARALLEL_FROM {
        inputs.iter().map(prepare).collect()
    } else {
        inputs.par_iter().map(prepare).collect()
    }
}

/// AES-256-GCM of `plaintext` under a fresh random nonce, as `SubjectKeys.encrypt_payload`.
///
/// Panics only when the operating system has no randomness to give.
pub fn seal_payload(key: &[u8; 32], record_id: &str, plaintext: &[u8]) -> Vec<u8> {
    let nonce: [u8; NONCE_LEN] = aead::Nonce::<Aes256Gcm>::generate().into();
    seal(key, &nonce, record_id.as_bytes(), plaintext)
}

/// `seal_payload` with a given nonce: for known-answer tests, never for new payloads.
pub fn seal_payload_with_nonce(
    key: &[u8; 32],
    nonce: &[u8; NONCE_LEN],
    record_id: &str,
    plaintext: &[u8],
) -> Vec<u8> {
    seal(key, nonce, record_id.as_bytes(), plaintext)
}

/// `nonce ‖ AES-256-GCM(key, nonce, aad, plaintext) ‖ tag`.
fn seal(key: &[u8; 32], nonce: &[u8; NONCE_LEN], aad: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let cipher = Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key));
    let mut sealed = Vec::with_capacity(NONCE_LEN + plaintext.len() + TAG_LEN);
    sealed.extend_from_slice(nonce);
    sealed.extend_from_slice(plaintext);
    let tag = cipher
        .encrypt_inout_detached(
            &Nonce::from(*nonce),
            aad,
            sealed[NONCE_LEN..].as_mut().into(),
        )
        // Only messages of 64 GiB or more are refused; payloads stop at 256 KiB.
        .expect("a payload within AES-GCM's length limit");
    sealed.extend_from_slice(&tag);
    sealed
}

/// The plaintext of a sealed payload, `None` when it fails authentication.
pub fn open_payload(key: &[u8; 32], record_id: &str, sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < NONCE_LEN + TAG_LEN {
        return None;
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    let (ciphertext, tag) = body.split_at(body.len() - TAG_LEN);
    let nonce: [u8; NONCE_LEN] = nonce.try_into().ok()?;
    let tag: [u8; TAG_LEN] = tag.try_into().ok()?;
    let cipher = Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key));
    let mut plaintext = ciphertext.to_vec();
    cipher
        .decrypt_inout_detached(
            &Nonce::from(nonce),
            record_id.as_bytes(),
            plaintext.as_mut_slice().into(),
            &Tag::from(tag),
        )
        .ok()?;
    Some(plaintext)
}

/// A header's place in its stream and its signing context.
pub struct Place<'a> {
    pub seq: u64,
    pub prev: &'a Hash,
    pub key_id: &'a str,
    pub ingested_at: &'a str,
}

enum Member<'a> {
    Text(&'a str),
    Number(f64),
    Hex(&'a Hash),
}

/// RFC 8785 bytes of the header of `chain.build_header`: what is signed and chained.
pub fn canonical_header(fields: &HeaderFields, place: &Place<'_>) -> Vec<u8> {
    // Numbers are written as RFC 8785 writes any JSON number (an IEEE-754 double), so that
    // this equals canonicalising the header's JSON text for every seq.
    #[expect(clippy::cast_precision_loss, reason = "as RFC 8785 reads the number")]
    let (seq, field_count) = (place.seq as f64, fields.field_count as f64);
    let mut members = [
        ("format", Member::Text(HEADER_FORMAT)),
        ("tenant", Member::Text(&fields.tenant)),
        ("stream", Member::Text(&fields.stream)),
        ("seq", Member::Number(seq)),
        ("record_id", Member::Text(&fields.record_id)),
        ("record_type", Member::Text(&fields.record_type)),
        ("occurred_at", Member::Text(&fields.occurred_at)),
        ("subject_ref", Member::Text(&fields.subject_ref)),
        ("root", Member::Hex(&fields.root)),
        ("field_count", Member::Number(field_count)),
        ("prev", Member::Hex(place.prev)),
        ("key_id", Member::Text(place.key_id)),
        ("ingested_at", Member::Text(place.ingested_at)),
        ("attestation", Member::Text(ATTESTATION)),
    ];
    members.sort_by(|(a, _), (b, _)| member_order::member_order(a, b));
    let mut out = Vec::with_capacity(512);
    out.push(b'{');
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        jcs::write_string(name, &mut out);
        out.push(b':');
        match value {
            Member::Text(text) => jcs::write_string(text, &mut out),
            Member::Number(value) => number::write(*value, &mut out),
            Member::Hex(hash) => write_hex(hash, &mut out),
        }
    }
    out.push(b'}');
    out
}

fn write_hex(hash: &Hash, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for byte in hash {
        out.push(HEX[usize::from(byte >> 4)]);
        out.push(HEX[usize::from(byte & 0xf)]);
    }
    out.push(b'"');
}

/// A stream's next sequence number and the chain leaf its next record links to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub next_seq: u64,
    pub prev: Hash,
}

/// A record placed in its stream, signed and chained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signed {
    pub seq: u64,
    pub header: Vec<u8>,
    pub signature: [u8; 64],
    pub chain_leaf: Hash,
}

/// What signs headers: the hosted key (an `ed25519_dalek::SigningKey`) or a key held in a
/// hardware module (`crate::hsm::ModuleSigner`). `sign_batch` calls it from every core.
pub trait HeaderKey: Sync {
    /// The Ed25519 signature of `message`, or why the key could not sign.
    fn sign_message(&self, message: &[u8]) -> std::result::Result<[u8; 64], String>;
}

impl HeaderKey for SigningKey {
    fn sign_message(&self, message: &[u8]) -> std::result::Result<[u8; 64], String> {
        Ok(self.sign(message).to_bytes())
    }
}

/// Why a batch cannot be placed or signed; nothing is signed then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlaceError {
    /// `slots` and the records differ in length.
    SlotCount { records: usize, slots: usize },
    /// Record `index` names a slot beyond the heads.
    SlotOutOfRange { index: usize, slot: usize },
    /// Record `index` would take a stream past the last u64 sequence number.
    SequenceExhausted { index: usize },
    /// The key could not sign (a hardware module that failed or went away).
    Key { reason: String },
}

impl fmt::Display for PlaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlaceError::SlotCount { records, slots } => {
                write!(f, "{records} records but {slots} slots")
            }
            PlaceError::SlotOutOfRange { index, slot } => {
                write!(f, "record {index} names slot {slot}, beyond the heads")
            }
            PlaceError::SequenceExhausted { index } => {
                write!(f, "record {index}: its stream has no sequence number left")
            }
            PlaceError::Key { reason } => write!(f, "the header key could not sign: {reason}"),
        }
    }
}

impl std::error::Error for PlaceError {}

/// Places, signs and chains `records` in order. Record `i` takes the head `heads[slots[i]]`
/// (its seq and `prev`) and moves it on; `heads` ends as the final heads. Headers are built
/// in order, then signed on every core.
pub fn sign_batch<K: HeaderKey + ?Sized>(
    key: &K,
    key_id: &str,
    ingested_at: &str,
    records: &[&HeaderFields],
    slots: &[usize],
    heads: &mut [Head],
) -> std::result::Result<Vec<Signed>, PlaceError> {
    if records.len() != slots.len() {
        return Err(PlaceError::SlotCount {
            records: records.len(),
            slots: slots.len(),
        });
    }
    // Checked before any head moves, so that a refused batch leaves the heads as they were.
    if let Some((index, &slot)) = slots.iter().enumerate().find(|(_, &s)| s >= heads.len()) {
        return Err(PlaceError::SlotOutOfRange { index, slot });
    }
    let mut next = heads.to_vec();
    let mut placed = Vec::with_capacity(records.len());
    for (index, (fields, &slot)) in records.iter().zip(slots).enumerate() {
        let head = &mut next[slot];
        let seq = head.next_seq;
        let after = seq
            .checked_add(1)
            .ok_or(PlaceError::SequenceExhausted { index })?;
        let place = Place {
            seq,
            prev: &head.prev,
            key_id,
            ingested_at,
        };
        let header = canonical_header(fields, &place);
        let chain_leaf = merkle::leaf_hash(&header);
        *head = Head {
            next_seq: after,
            prev: chain_leaf,
        };
        placed.push((seq, header, chain_leaf));
    }
    let sign = |(seq, header, chain_leaf): (u64, Vec<u8>, Hash)| {
        Ok(Signed {
            seq,
            signature: sign_header(key, &header).map_err(|reason| PlaceError::Key { reason })?,
            header,
            chain_leaf,
        })
    };
    let signed: std::result::Result<Vec<Signed>, PlaceError> = if placed.len() < PARALLEL_FROM {
        placed.into_iter().map(sign).collect()
    } else {
        placed.into_par_iter().map(sign).collect()
    };
    // Heads move only once every record is signed: a key that failed leaves them as they were.
    let signed = signed?;
    heads.copy_from_slice(&next);
    Ok(signed)
}

/// Ed25519 signature of `HEADER_CONTEXT ‖ header`, as `HeaderSigner.sign`.
pub fn sign_header<K: HeaderKey + ?Sized>(
    key: &K,
    header: &[u8],
) -> std::result::Result<[u8; 64], String> {
    let mut message = Vec::with_capacity(HEADER_CONTEXT.len() + header.len());
    message.extend_from_slice(HEADER_CONTEXT);
    message.extend_from_slice(header);
    key.sign_message(&message)
}

#[cfg(test)]
mod tests;
