use super::*;
use crate::commitment::{commit_field, derive_salt};

const KEY: [u8; 32] = [9; 32];

fn commit(payload: &str, declarations: &[(&str, &str)], strict: bool) -> Result<CommittedRecord> {
    commit_record(payload.as_bytes(), declarations, strict, &KEY, "record-1")
}

fn fault(
    payload: &str,
    declarations: &[(&str, &str)],
    strict: bool,
) -> (&'static str, Option<String>) {
    match commit(payload, declarations, strict) {
        Ok(_) => ("ok", None),
        Err(error) => (error.code.as_str(), error.field),
    }
}

fn fault_at(code: &'static str, field: &str) -> (&'static str, Option<String>) {
    (code, Some(field.to_string()))
}

#[test]
fn leaves_of_the_spec_example() {
    let record = commit("{\"a\":{\"b\":[10,{\"c/d\":true}]}}", &[], false).unwrap();
    let paths: Vec<&str> = record.leaves().map(|leaf| leaf.path).collect();
    assert_eq!(paths, ["ooa:/a/b/0", "ooao:/a/b/1/c~1d"]);
    assert_eq!(record.canonical, b"{\"a\":{\"b\":[10,{\"c/d\":true}]}}");
    assert_eq!(record.field_count(), 2);
}

#[test]
fn leaves_are_every_scalar_and_empty_container_in_path_order() {
    let record = commit(
        "{\"z\":1,\"b\":{\"c\":[],\"d\":{}},\"a\":[null,\"x\"]}",
        &[],
        false,
    )
    .unwrap();
    let leaves: Vec<(&str, &[u8])> = record.leaves().map(|l| (l.path, l.encoded)).collect();
    assert_eq!(
        leaves,
        [
            ("o:/z", b"num:1".as_slice()),
            ("oa:/a/0", b"null:"),
            ("oa:/a/1", b"str:x"),
            ("oo:/b/c", b"arr:[]"),
            ("oo:/b/d", b"obj:{}"),
        ]
    );
}

#[test]
fn salts_commitments_and_root() {
    let record = commit("{\"n\":1.0,\"t\":\"e\\u0301\"}", &[("o:/t", "text")], false).unwrap();
    let mut hashes = Vec::new();
    for leaf in record.leaves() {
        let salt = derive_salt(&KEY, "record-1", leaf.path).unwrap();
        assert_eq!(leaf.salt, salt);
        assert_eq!(
            leaf.commitment,
            commit_field(leaf.path, &salt, leaf.encoded)
        );
        hashes.push(leaf.commitment);
    }
    assert_eq!(record.root, merkle::root(&hashes));
    let kinds: Vec<Kind> = record.leaves().map(|leaf| leaf.kind).collect();
    assert_eq!(kinds, [Kind::Free, Kind::Text]);
    assert_eq!(record.leaf(1).encoded, "txt:\u{e9}".as_bytes());
}

#[test]
fn order_of_the_first_checks() {
    let big = format!("{{\"s\":\"{}\"}}", "x".repeat(MAX_PAYLOAD_LEN));
    let bad_declaration = [("nope", "free")];
    let (code, _) = fault(&big, &bad_declaration, false);
    assert_eq!(code, "payload_too_large");
    assert_eq!(
        fault("[", &bad_declaration, false),
        fault_at("declaration_invalid", "nope")
    );
    let result = commit_record(b"[", &[], false, &[0; 31], "");
    assert_eq!(result.unwrap_err().code, Code::SaltKeyInvalid);
    let result = commit_record(b"[", &[], false, &KEY, "");
    assert_eq!(result.unwrap_err().code, Code::RecordIdInvalid);
    assert_eq!(fault("[", &[], false).0, "invalid_json");
    assert_eq!(fault("[]", &[], false).0, "payload_not_object");
    assert_eq!(fault("\"x\"", &[], false).0, "payload_not_object");
    assert_eq!(fault("{}", &[], false).0, "payload_empty");
}

#[test]
fn order_of_the_walk_checks() {
    // Canonical order: "a" (control character inside) before "b" (undeclared).
    let payload = "{\"b\":1,\"a\":{\"\\u0007\":1}}";
    assert_eq!(
        fault(payload, &[], true),
        fault_at("control_character", "oo:/a/\u{7}")
    );
    let long = "x".repeat(MAX_PATH_LEN);
    let payload = format!("{{\"{long}\":{{\"\\u0085\":1}}}}");
    assert_eq!(
        fault(&payload, &[], false),
        fault_at("path_too_long", &format!("o:/{long}"))
    );
    let payload = "{\"a\":{\"b\":1},\"c\":{\"d\":\"x\"}}";
    let declarations = [("o:/a", "money"), ("oo:/c/d", "money")];
    assert_eq!(
        fault(payload, &declarations, false),
        fault_at("value_type", "o:/a")
    );
    let declarations = [("oo:/a/b", "money"), ("oo:/c/d", "money")];
    assert_eq!(
        fault(payload, &declarations, false),
        fault_at("value_type", "oo:/c/d")
    );
    assert_eq!(
        fault("{\"a\":1.5}", &[("o:/a", "money")], false),
        fault_at("money_fraction", "o:/a")
    );
    assert_eq!(
        fault("{\"a\":1e16}", &[], false),
        fault_at("integer_out_of_range", "o:/a")
    );
    assert_eq!(
        fault("{\"a\":{}}", &[("o:/a", "text")], false),
        fault_at("value_type", "o:/a")
    );
}

#[test]
fn path_length_limit() {
    let name = "x".repeat(MAX_PATH_LEN - 3);
    assert_eq!(fault(&format!("{{\"{name}\":1}}"), &[], false).0, "ok");
    let name = "x".repeat(MAX_PATH_LEN - 2);
    assert_eq!(
        fault(&format!("{{\"{name}\":1}}"), &[], false).0,
        "path_too_long"
    );
    // Escapes count: `/` is written `~1`.
    let name = "/".repeat(MAX_PATH_LEN / 2);
    assert_eq!(
        fault(&format!("{{\"{name}\":1}}"), &[], false).0,
        "path_too_long"
    );
}

#[test]
fn strict_streams() {
    let payload = "{\"a\":{\"b\":[1,{\"c\":2}]},\"d\":3}";
    assert_eq!(
        fault(payload, &[], true),
        fault_at("undeclared_field", "ooa:/a/b/0")
    );
    assert_eq!(
        fault(payload, &[("o:/a", "free")], true),
        fault_at("undeclared_field", "o:/d")
    );
    assert_eq!(
        fault(payload, &[("o:/a", "free"), ("o:/d", "integer")], true).0,
        "ok"
    );
    let declarations = [
        ("ooa:/a/b/*", "free"),
        ("ooao:/a/b/*/c", "integer"),
        ("o:/d", "free"),
    ];
    assert_eq!(fault(payload, &declarations, true).0, "ok");
    let record = commit(payload, &declarations, true).unwrap();
    let kinds: Vec<(&str, Kind)> = record.leaves().map(|l| (l.path, l.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("o:/d", Kind::Free),
            ("ooa:/a/b/0", Kind::Free),
            ("ooao:/a/b/1/c", Kind::Integer)
        ]
    );
    // A declared path absent from the payload is not an error.
    assert_eq!(
        fault("{\"d\":3}", &[("o:/d", "free"), ("o:/zz", "uuid")], true).0,
        "ok"
    );
}

#[test]
fn too_many_fields() {
    let members: Vec<String> = (0..=MAX_FIELDS)
        .map(|i| format!("\"f{i:04}\":{i}"))
        .collect();
    let payload = format!("{{{}}}", members.join(","));
    assert_eq!(fault(&payload, &[], false), ("too_many_fields", None));
    let payload = format!("{{{}}}", members[..MAX_FIELDS].join(","));
    assert_eq!(
        commit(&payload, &[], false).unwrap().field_count(),
        MAX_FIELDS
    );
}

#[test]
fn parse_faults_come_through() {
    assert_eq!(
        fault("{\"a\":1,\"a\":2}", &[], false),
        fault_at("duplicate_member", "o:/a")
    );
    assert_eq!(
        fault("{\"a\":[1e999]}", &[], false),
        fault_at("number_out_of_range", "oa:/a/0")
    );
}
