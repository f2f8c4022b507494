use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::*;

/// HMAC of the documented salt message by the `hmac` crate, an independent implementation.
fn hmac_salt(key: &[u8], record_id: &str, path: &str) -> Hash {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(b"recordseal/salt/v1\0");
    mac.update(record_id.as_bytes());
    mac.update(b"\0");
    mac.update(path.as_bytes());
    mac.finalize().into_bytes().into()
}

fn sha256_commitment(path: &str, salt: &[u8], encoded: &[u8]) -> Hash {
    let mut message = b"recordseal/field/v1".to_vec();
    message.extend_from_slice(path.as_bytes());
    message.push(0);
    message.extend_from_slice(salt);
    message.push(0);
    message.extend_from_slice(encoded);
    Sha256::digest(&message).into()
}

#[test]
fn salts_match_the_hmac_crate_across_block_boundaries() {
    let key: Vec<u8> = (0..32).map(|i| i * 7 + 1).collect();
    for id_len in [1, 36, 44, 45, 46, 100, 108, 109, 200] {
        let record_id = "r".repeat(id_len);
        for path_len in [0, 1, 4, 8, 9, 40, 64, 120, 512] {
            let path = "p".repeat(path_len);
            let expected = hmac_salt(&key, &record_id, &path);
            assert_eq!(derive_salt(&key, &record_id, &path).unwrap(), expected);
        }
    }
}

#[test]
fn fields_hashed_in_pairs_match_one_by_one() {
    let key = [0xa5u8; 32];
    let hasher = FieldHasher::new(&key, "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").unwrap();
    let paths: Vec<String> = (0..9)
        .map(|i| format!("o:/{}", "f".repeat(i * 13)))
        .collect();
    let encodings: Vec<Vec<u8>> = (0..9).map(|i| vec![b'x'; i * 37]).collect();
    let fields: Vec<(&str, &[u8])> = paths
        .iter()
        .zip(&encodings)
        .map(|(p, e)| (p.as_str(), e.as_slice()))
        .collect();
    let committed = hasher.commit_fields(fields.len(), |i| fields[i]);
    assert_eq!(committed.len(), fields.len());
    for ((path, encoded), (salt, commitment)) in fields.iter().zip(&committed) {
        let expected_salt = hmac_salt(&key, "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", path);
        assert_eq!(*salt, expected_salt, "{path}");
        assert_eq!(
            *commitment,
            sha256_commitment(path, salt, encoded),
            "{path}"
        );
        assert_eq!(*commitment, commit_field(path, salt, encoded));
    }
}

#[test]
fn commit_field_of_the_documented_message() {
    let salt = [1u8; 32];
    assert_eq!(
        commit_field("o:/a", &salt, b"num:1"),
        sha256_commitment("o:/a", &salt, b"num:1")
    );
    assert_eq!(
        commit_field("o:/a", b"short", b""),
        sha256_commitment("o:/a", b"short", b"")
    );
}

#[test]
fn key_and_record_id_checks() {
    let code = |key: &[u8], id: &str| derive_salt(key, id, "o:/a").unwrap_err().code;
    assert_eq!(code(&[0; 31], "r"), Code::SaltKeyInvalid);
    assert_eq!(code(&[0; 33], ""), Code::SaltKeyInvalid);
    assert_eq!(code(&[0; 32], ""), Code::RecordIdInvalid);
    assert_eq!(code(&[0; 32], "a\0"), Code::RecordIdInvalid);
}
