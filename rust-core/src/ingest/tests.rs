use ed25519_dalek::{Signature, Verifier};
use serde_json::json;

use super::*;
use crate::error::Code;

const RECORD_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const KEY_ID: &str = "0123456789abcdef";
const INGESTED_AT: &str = "2026-11-21T07:20:26.123456Z";

fn signing_key() -> SigningKey {
    SigningKey::from_bytes(&[7; 32])
}

fn fields(tenant: &str, stream: &str, record_id: &str) -> HeaderFields {
    HeaderFields {
        tenant: tenant.to_owned(),
        stream: stream.to_owned(),
        record_id: record_id.to_owned(),
        record_type: "order.placed".to_owned(),
        occurred_at: "2026-11-21T07:20:26Z".to_owned(),
        subject_ref: "sr_2f1c".to_owned(),
        root: [0xab; 32],
        field_count: 20,
    }
}

/// The header as `chain.build_header` makes it, as JSON text, then RFC 8785 by `jcs`.
fn canonicalized(fields: &HeaderFields, place: &Place<'_>) -> Vec<u8> {
    let header = json!({
        "format": HEADER_FORMAT,
        "tenant": fields.tenant,
        "stream": fields.stream,
        "seq": place.seq,
        "record_id": fields.record_id,
        "record_type": fields.record_type,
        "occurred_at": fields.occurred_at,
        "subject_ref": fields.subject_ref,
        "root": hex::encode(fields.root),
        "field_count": fields.field_count,
        "prev": hex::encode(place.prev),
        "key_id": place.key_id,
        "ingested_at": place.ingested_at,
        "attestation": ATTESTATION,
    });
    jcs::canonicalize(header.to_string().as_bytes()).unwrap()
}

#[test]
fn header_is_rfc8785_of_the_header_object() {
    let texts = [
        "acme",
        "",
        "quote \" and backslash \\ and slash /",
        "controls \u{0} \u{8} \t \n \u{b} \u{c} \r \u{1f} \u{7f}",
        "non-ASCII é ü ß \u{80} \u{2028} \u{e000} \u{ffff}",
        "astral 😀 \u{10000} \u{10ffff}",
    ];
    let prev = [0x01; 32];
    for text in texts {
        for seq in [1, 2, 1 << 53, (1 << 53) + 1, u64::MAX] {
            let mut fields = fields(text, &format!("s-{text}"), RECORD_ID);
            fields.record_type = text.chars().rev().collect();
            fields.subject_ref = format!("{text}{text}");
            let place = Place {
                seq,
                prev: &prev,
                key_id: text,
                ingested_at: INGESTED_AT,
            };
            assert_eq!(
                canonical_header(&fields, &place),
                canonicalized(&fields, &place),
                "{text:?} at seq {seq}"
            );
        }
    }
}

#[test]
fn header_known_bytes() {
    let place = Place {
        seq: 3,
        prev: &[0; 32],
        key_id: KEY_ID,
        ingested_at: INGESTED_AT,
    };
    let header = canonical_header(&fields("acme", "orders", RECORD_ID), &place);
    let expected = format!(
        "{{\"attestation\":\"hosted-ingest\",\"field_count\":20,\"format\":\"recordseal/header/v1\",\
         \"ingested_at\":\"{INGESTED_AT}\",\"key_id\":\"{KEY_ID}\",\
         \"occurred_at\":\"2026-11-21T07:20:26Z\",\"prev\":\"{}\",\"record_id\":\"{RECORD_ID}\",\
         \"record_type\":\"order.placed\",\"root\":\"{}\",\"seq\":3,\"stream\":\"orders\",\
         \"subject_ref\":\"sr_2f1c\",\"tenant\":\"acme\"}}",
        "00".repeat(32),
        "ab".repeat(32),
    );
    assert_eq!(String::from_utf8(header).unwrap(), expected);
}

#[test]
fn aes_256_gcm_known_answer() {
    // The GCM specification (McGrew and Viega), test case 16: AES-256, 96-bit IV, with AAD.
    let key = hex::decode("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
    let nonce = hex::decode("cafebabefacedbaddecaf888").unwrap();
    let plaintext = hex::decode(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72\
         1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
    )
    .unwrap();
    let aad = hex::decode("feedfacedeadbeeffeedfacedeadbeefabaddad2").unwrap();
    let expected = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa\
                    8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662\
                    76fc6ece0f4e1768cddf8853bb2d551b";
    let key: [u8; 32] = key.unwrap().try_into().unwrap();
    let nonce: [u8; NONCE_LEN] = nonce.try_into().unwrap();
    let sealed = seal(&key, &nonce, &aad, &plaintext);
    assert_eq!(
        hex::encode(&sealed[..NONCE_LEN]),
        "cafebabefacedbaddecaf888"
    );
    assert_eq!(hex::encode(&sealed[NONCE_LEN..]), expected);
}

#[test]
fn sealed_payload_matches_cryptography() {
    // Made with Python's `cryptography`: AESGCM(bytes(range(32))).encrypt(
    //     bytes(range(100, 112)), '{"a":"é"}'.encode(), RECORD_ID.encode())
    let key: [u8; 32] = std::array::from_fn(|i| i as u8);
    let nonce: [u8; NONCE_LEN] = std::array::from_fn(|i| 100 + i as u8);
    let sealed = seal_payload_with_nonce(&key, &nonce, RECORD_ID, "{\"a\":\"é\"}".as_bytes());
    assert_eq!(
        hex::encode(&sealed[NONCE_LEN..]),
        "3339bf4443cb95371c1f9a0d07c56a30a4ce4d6e72f319ca171a"
    );
}

#[test]
fn sealed_payload_round_trip() {
    let key = [9; 32];
    let plaintext = b"{\"amount\":12}";
    let sealed = seal_payload(&key, RECORD_ID, plaintext);
    assert_eq!(sealed.len(), NONCE_LEN + plaintext.len() + TAG_LEN);
    assert_eq!(open_payload(&key, RECORD_ID, &sealed).unwrap(), plaintext);
    // Fresh nonces: sealing twice gives two ciphertexts.
    assert_ne!(seal_payload(&key, RECORD_ID, plaintext), sealed);
    assert_eq!(open_payload(&key, "another-record", &sealed), None);
    assert_eq!(open_payload(&[8; 32], RECORD_ID, &sealed), None);
    for at in 0..sealed.len() {
        let mut tampered = sealed.clone();
        tampered[at] ^= 1;
        assert_eq!(open_payload(&key, RECORD_ID, &tampered), None, "byte {at}");
    }
    assert_eq!(
        open_payload(&key, RECORD_ID, &sealed[..NONCE_LEN + 15]),
        None
    );
}

#[test]
fn prepare_commits_and_seals() {
    let payload = br#"{"b":[1,2],"a":{"c":"x"},"d":1.0}"#;
    let salt_key = [3; 32];
    let payload_key = [4; 32];
    let declarations = Declarations::new(&[("o:/d", "integer")]).unwrap();
    let input = Input {
        tenant: "acme",
        stream: "orders",
        record_type: "order.placed",
        occurred_at: "2026-11-21T07:20:26Z",
        subject_ref: "sr_2f1c",
        record_id: RECORD_ID,
        payload: Payload::Text(payload),
        declarations: &declarations,
        strict: false,
        salt_key: &salt_key,
        payload_key: &payload_key,
    };
    let prepared = prepare(&input).unwrap();
    let committed =
        leaves::commit_declared(payload, &declarations, false, &salt_key, RECORD_ID).unwrap();
    assert_eq!(prepared.fields.root, committed.root);
    assert_eq!(prepared.fields.field_count, 4);
    assert_eq!(prepared.fields.record_id, RECORD_ID);
    let opened = open_payload(&payload_key, RECORD_ID, &prepared.sealed_payload).unwrap();
    assert_eq!(opened, committed.canonical);
    assert_eq!(opened, br#"{"a":{"c":"x"},"b":[1,2],"d":1}"#);
}

#[test]
fn a_tree_the_request_reader_parsed_prepares_as_its_text() {
    let body = br#"{"stream":"orders","record_type":"t","occurred_at":"2026-11-21T07:20:26Z","subject_id":"s","payload":{"b":[1,2],"a":{"c":"x"},"d":1.0}}"#;
    let read = crate::request::read_record(body, None).unwrap();
    let declarations = Declarations::new(&[("o:/d", "integer")]).unwrap();
    let (salt_key, payload_key) = ([3; 32], [4; 32]);
    let input = |payload| Input {
        tenant: "acme",
        stream: "orders",
        record_type: "t",
        occurred_at: "2026-11-21T07:20:26Z",
        subject_ref: "sr_2f1c",
        record_id: RECORD_ID,
        payload,
        declarations: &declarations,
        strict: false,
        salt_key: &salt_key,
        payload_key: &payload_key,
    };
    let text = prepare(&input(Payload::Text(
        br#"{"b":[1,2],"a":{"c":"x"},"d":1.0}"#,
    )))
    .unwrap();
    let tree = prepare(&input(Payload::Tree(&read.payload, None))).unwrap();
    assert_eq!(tree.fields, text.fields);
    let open =
        |prepared: &Prepared| open_payload(&payload_key, RECORD_ID, &prepared.sealed_payload);
    assert_eq!(open(&tree), open(&text));
    // The measured size is checked first, as the text's is.
    let error = prepare(&input(Payload::Tree(&read.payload, Some(262_145)))).unwrap_err();
    assert_eq!(error.code, Code::PayloadTooLarge);
}

#[test]
fn prepare_batch_keeps_order_and_refusals() {
    let salt_key = [3; 32];
    let payload_key = [4; 32];
    let none = Declarations::empty();
    let payloads: Vec<String> = (0..40)
        .map(|i| match i % 5 {
            0 => "[1]".to_owned(),
            1 => "{\"a\":".to_owned(),
            _ => format!("{{\"n\":{i}}}"),
        })
        .collect();
    let ids: Vec<String> = (0..40).map(|i| format!("record-{i}")).collect();
    let inputs: Vec<Input<'_>> = payloads
        .iter()
        .zip(&ids)
        .map(|(payload, id)| Input {
            tenant: "acme",
            stream: "orders",
            record_type: "t",
            occurred_at: "2026-11-21T07:20:26Z",
            subject_ref: "sr",
            record_id: id,
            payload: Payload::Text(payload.as_bytes()),
            declarations: &none,
            strict: false,
            salt_key: &salt_key,
            payload_key: &payload_key,
        })
        .collect();
    let results = prepare_batch(&inputs);
    assert_eq!(results.len(), inputs.len());
    for (i, (result, input)) in results.iter().zip(&inputs).enumerate() {
        match (i % 5, result) {
            (0, Err(error)) => assert_eq!(error.code, Code::PayloadNotObject),
            (1, Err(error)) => assert_eq!(error.code, Code::InvalidJson),
            (_, Ok(prepared)) => {
                let expected = prepare(input).unwrap();
                assert_eq!(prepared.fields, expected.fields);
            }
            (_, Err(error)) => panic!("record {i}: {error}"),
        }
    }
}

/// Streams "a", "b", "c" interleaved, each with its own head.
fn interleaved(count: usize) -> (Vec<HeaderFields>, Vec<usize>, Vec<Head>) {
    let streams = ["a", "b", "c"];
    let slots: Vec<usize> = (0..count).map(|i| (i * 7 + i / 3) % 3).collect();
    let records = slots
        .iter()
        .enumerate()
        .map(|(i, &slot)| fields("acme", streams[slot], &format!("record-{i}")))
        .collect();
    let heads = (0..3)
        .map(|slot| Head {
            next_seq: 1 + 10 * slot as u64,
            prev: [slot as u8; 32],
        })
        .collect();
    (records, slots, heads)
}

#[test]
fn chaining_across_interleaved_slots() {
    let key = signing_key();
    let (records, slots, mut heads) = interleaved(50);
    let expected_heads = heads.clone();
    let refs: Vec<&HeaderFields> = records.iter().collect();
    let signed = sign_batch(&key, KEY_ID, INGESTED_AT, &refs, &slots, &mut heads).unwrap();
    let mut walk = expected_heads;
    for ((record, &slot), signed) in records.iter().zip(&slots).zip(&signed) {
        let head = walk[slot];
        let place = Place {
            seq: head.next_seq,
            prev: &head.prev,
            key_id: KEY_ID,
            ingested_at: INGESTED_AT,
        };
        assert_eq!(signed.seq, head.next_seq);
        assert_eq!(signed.header, canonical_header(record, &place));
        assert_eq!(signed.chain_leaf, merkle::leaf_hash(&signed.header));
        walk[slot] = Head {
            next_seq: head.next_seq + 1,
            prev: signed.chain_leaf,
        };
    }
    assert_eq!(heads, walk);
    assert!(slots.iter().filter(|&&s| s == 2).count() > 10);
}

#[test]
fn parallel_signatures_equal_sequential_ones() {
    let key = signing_key();
    let (records, slots, mut heads) = interleaved(64);
    let refs: Vec<&HeaderFields> = records.iter().collect();
    let signed = sign_batch(&key, KEY_ID, INGESTED_AT, &refs, &slots, &mut heads).unwrap();
    for item in &signed {
        let mut message = HEADER_CONTEXT.to_vec();
        message.extend_from_slice(&item.header);
        assert_eq!(item.signature, key.sign(&message).to_bytes());
        let signature = Signature::from_bytes(&item.signature);
        assert!(key.verifying_key().verify(&message, &signature).is_ok());
    }
    // One at a time, each its own batch (the sequential path), from the same heads.
    let (_, _, mut heads) = interleaved(64);
    for ((record, &slot), item) in refs.iter().zip(&slots).zip(&signed) {
        let alone = sign_batch(&key, KEY_ID, INGESTED_AT, &[record], &[slot], &mut heads).unwrap();
        assert_eq!(alone, std::slice::from_ref(item));
    }
}

#[test]
fn refused_placements_leave_the_heads() {
    let key = signing_key();
    let record = fields("acme", "orders", RECORD_ID);
    let start = [Head {
        next_seq: u64::MAX - 1,
        prev: [0; 32],
    }];
    let mut heads = start;
    let result = sign_batch(&key, KEY_ID, INGESTED_AT, &[&record], &[1], &mut heads);
    assert_eq!(
        result,
        Err(PlaceError::SlotOutOfRange { index: 0, slot: 1 })
    );
    let result = sign_batch(&key, KEY_ID, INGESTED_AT, &[&record], &[], &mut heads);
    assert_eq!(
        result,
        Err(PlaceError::SlotCount {
            records: 1,
            slots: 0
        })
    );
    let result = sign_batch(
        &key,
        KEY_ID,
        INGESTED_AT,
        &[&record, &record],
        &[0, 0],
        &mut heads,
    );
    assert_eq!(result, Err(PlaceError::SequenceExhausted { index: 1 }));
    assert_eq!(heads, start);
    let signed = sign_batch(&key, KEY_ID, INGESTED_AT, &[], &[], &mut heads).unwrap();
    assert!(signed.is_empty());
}
