use super::*;

fn unhex(text: &str) -> Vec<u8> {
    hex::decode(text).expect("hex")
}

/// RFC 5869 appendix A.3 (SHA-256, zero-length salt and info), the published case that
/// matches ours: an empty salt is the same HMAC key as none. Its OKM is 42 bytes; the first
/// 32 are the one block that `expand_each` computes.
#[test]
fn rfc5869_test_case_3() {
    let [okm] = expand_each(&[0x0b; 22], [b""]);
    assert_eq!(
        okm.to_vec(),
        unhex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d")
    );
}

/// tests/vectors/subject_keys.json, computed with `cryptography` (see its README).
#[test]
fn vectors_from_cryptography() {
    let text = include_str!("../../../tests/vectors/subject_keys.json");
    let document: serde_json::Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(document["salt_key_info"], "recordseal/salt-key/v1");
    assert_eq!(document["payload_key_info"], "recordseal/payload-key/v1");
    let cases = document["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        let field = |key: &str| unhex(case[key].as_str().expect("hex string"));
        let keys = derive(&field("subject_key")).expect("a 32-byte key");
        assert_eq!(
            keys.salt_key.to_vec(),
            field("salt_key"),
            "{}",
            case["name"]
        );
        assert_eq!(
            keys.payload_key.to_vec(),
            field("payload_key"),
            "{}",
            case["name"]
        );
    }
}

#[test]
fn the_two_keys_differ() {
    let keys = derive(&[7; 32]).expect("a 32-byte key");
    assert_ne!(keys.salt_key, keys.payload_key);
}

#[test]
fn refuses_other_lengths() {
    for len in [0, 1, 16, 31, 33, 64] {
        assert_eq!(derive(&vec![1; len]).err(), Some(KeyLength(len)));
    }
    assert_eq!(
        KeyLength(31).to_string(),
        "a subject key is 32 bytes, not 31"
    );
}
