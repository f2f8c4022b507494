//! Every case of the language-neutral vector files in `tests/vectors/` (format in its
//! README), run against the Rust API.

use std::path::PathBuf;

use recordseal_core::error::{Code, Error, Result};
use recordseal_core::kinds::{self, Kind, Value};
use recordseal_core::{jcs, leaves, merkle, number};
use serde_json::Value as Json;

fn load(file: &str) -> Option<Json> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors")
        .join(file);
    // The vector files are written alongside the code; a missing one is skipped, not failed.
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipping {}: not written yet", path.display());
        return None;
    };
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn cases(document: &Json) -> &[Json] {
    document["cases"].as_array().expect("a cases array")
}

fn name(case: &Json) -> &str {
    case["name"].as_str().unwrap_or("<unnamed>")
}

fn text<'a>(case: &'a Json, key: &str) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("{}: {key} is not a string", name(case)))
}

fn bytes(case: &Json, key: &str) -> Vec<u8> {
    hex::decode(text(case, key)).unwrap_or_else(|e| panic!("{}: {key}: {e}", name(case)))
}

fn hex_list(value: &Json) -> Vec<Vec<u8>> {
    let items = value.as_array().expect("a list of hex strings");
    items
        .iter()
        .map(|item| hex::decode(item.as_str().unwrap()).unwrap())
        .collect()
}

fn int(case: &Json, key: &str) -> i64 {
    case[key]
        .as_i64()
        .unwrap_or_else(|| panic!("{}: {key} is not an integer", name(case)))
}

/// Checks `result` against the case's `error` object, or hands the value back.
fn outcome<T: std::fmt::Debug>(case: &Json, result: Result<T>) -> Option<T> {
    let expected = &case["error"];
    if expected.is_null() {
        return Some(result.unwrap_or_else(|e| panic!("{}: unexpected error {e}", name(case))));
    }
    let error: Error = match result {
        Ok(value) => panic!("{}: expected {expected}, got {value:?}", name(case)),
        Err(error) => error,
    };
    let field = expected["field"].as_str();
    assert_eq!(
        (error.code.as_str(), error.field.as_deref()),
        (expected["code"].as_str().unwrap(), field),
        "{}: {}",
        name(case),
        error.message
    );
    None
}

#[test]
fn jcs() {
    let Some(document) = load("jcs.json") else {
        return;
    };
    for case in cases(&document) {
        let input = match case.get("input_hex") {
            Some(_) => bytes(case, "input_hex"),
            None => text(case, "input").as_bytes().to_vec(),
        };
        if let Some(output) = outcome(case, jcs::canonicalize(&input)) {
            assert_eq!(
                String::from_utf8(output).unwrap(),
                text(case, "output"),
                "{}",
                name(case)
            );
        }
    }
}

#[test]
fn numbers() {
    let Some(document) = load("numbers.json") else {
        return;
    };
    for case in cases(&document) {
        let bits = u64::from_str_radix(text(case, "bits"), 16).unwrap();
        let value = f64::from_bits(bits);
        let expected = text(case, "text");
        assert_eq!(number::text(value), expected, "{}", name(case));
        let round_trip = jcs::canonicalize(format!("[{expected}]").as_bytes()).unwrap();
        assert_eq!(
            round_trip,
            format!("[{expected}]").as_bytes(),
            "{}",
            name(case)
        );
        // Rust's `{:?}` is the shortest round-trip decimal, like Python's repr.
        let shortest = jcs::canonicalize(format!("[{value:?}]").as_bytes()).unwrap();
        assert_eq!(
            shortest,
            format!("[{expected}]").as_bytes(),
            "{}",
            name(case)
        );
    }
}

fn value_of(json: &Json) -> Value<'_> {
    match json {
        Json::Null => Value::Null,
        Json::Bool(flag) => Value::Bool(*flag),
        Json::Number(number) => Value::Num(number.as_f64().expect("a finite number")),
        Json::String(text) => Value::Str(text),
        Json::Array(items) if items.is_empty() => Value::EmptyArray,
        Json::Object(members) if members.is_empty() => Value::EmptyObject,
        _ => Value::NonEmptyContainer,
    }
}

#[test]
fn kinds() {
    let Some(document) = load("kinds.json") else {
        return;
    };
    for case in cases(&document) {
        let result = Kind::from_name(text(case, "kind")).and_then(|kind| {
            let mut encoded = Vec::new();
            kinds::encode(kind, value_of(&case["value"]), &mut encoded).map(|()| encoded)
        });
        if let Some(encoded) = outcome(case, result) {
            let encoded = String::from_utf8(encoded).unwrap();
            assert_eq!(encoded, text(case, "encoded"), "{}", name(case));
        }
    }
}

/// The payload generators of the README, for payloads too large to store.
fn generate(spec: &Json) -> String {
    let count = |key: &str| spec[key].as_u64().map(|n| n as usize);
    if let Some(fields) = count("fields") {
        let members: Vec<String> = (0..fields).map(|i| format!("\"f{i:04}\":{i}")).collect();
        format!("{{{}}}", members.join(","))
    } else if let Some(depth) = count("depth") {
        format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
    } else if let Some(size) = count("bytes") {
        let filler = size - "{\"s\":\"\"}".len();
        format!("{{\"s\":\"{}\"}}", "x".repeat(filler))
    } else {
        panic!("unknown generator {spec}")
    }
}

#[test]
fn records() {
    let Some(document) = load("records.json") else {
        return;
    };
    for case in cases(&document) {
        let payload = match case.get("generate") {
            Some(spec) => generate(spec),
            None => text(case, "payload").to_owned(),
        };
        let declarations: Vec<(&str, &str)> = match &case["declarations"] {
            Json::Null => Vec::new(),
            Json::Object(map) => map
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
                .collect(),
            other => panic!("{}: declarations {other}", name(case)),
        };
        let result = leaves::commit_record(
            payload.as_bytes(),
            &declarations,
            case["strict"].as_bool().unwrap(),
            &bytes(case, "salt_key"),
            text(case, "record_id"),
        );
        let Some(record) = outcome(case, result) else {
            continue;
        };
        let expected = &case["expected"];
        let label = name(case);
        assert_eq!(
            String::from_utf8_lossy(&record.canonical),
            text(expected, "canonical"),
            "{label}"
        );
        assert_eq!(hex::encode(record.root), text(expected, "root"), "{label}");
        assert_eq!(
            record.field_count() as u64,
            expected["field_count"].as_u64().unwrap(),
            "{label}"
        );
        let Some(expected_leaves) = expected["leaves"].as_array() else {
            continue;
        };
        assert_eq!(record.field_count(), expected_leaves.len(), "{label}");
        for (leaf, want) in record.leaves().zip(expected_leaves) {
            assert_eq!(leaf.path, text(want, "path"), "{label}");
            assert_eq!(
                leaf.kind.name(),
                text(want, "kind"),
                "{label} {}",
                leaf.path
            );
            assert_eq!(
                String::from_utf8_lossy(leaf.encoded),
                text(want, "encoded"),
                "{label}"
            );
            assert_eq!(
                hex::encode(leaf.salt),
                text(want, "salt"),
                "{label} {}",
                leaf.path
            );
            assert_eq!(
                hex::encode(leaf.commitment),
                text(want, "commitment"),
                "{label}"
            );
        }
    }
}

/// The first refusal of spec section 5 that needs a negative number, as the Python binding
/// reports it (the Rust API takes unsigned sizes).
fn negative_refusal(case: &Json, keys: [(&str, Code); 2]) -> Option<Result<()>> {
    keys.into_iter()
        .find(|(key, _)| int(case, key) < 0)
        .map(|(key, code)| Err(Error::new(code, format!("negative {key}"))))
}

fn refs(nodes: &[Vec<u8>]) -> Vec<&[u8]> {
    nodes.iter().map(Vec::as_slice).collect()
}

#[test]
fn rfc6962() {
    let Some(document) = load("rfc6962.json") else {
        return;
    };
    let leaves = hex_list(&document["leaves"]);
    let list = |key: &str| document[key].as_array().expect("a list").iter();
    let root_of = |size: usize| merkle::root(&leaves[..size]).to_vec();
    for case in list("roots") {
        let size = int(case, "size") as usize;
        assert_eq!(
            hex::encode(root_of(size)),
            text(case, "root"),
            "size {size}"
        );
    }
    for case in list("inclusion") {
        let (index, size) = (int(case, "index") as u64, int(case, "size") as usize);
        let expected = hex_list(&case["proof"]);
        let proof = merkle::inclusion_proof(&leaves[..size], index).unwrap();
        assert_eq!(
            proof.iter().map(|n| n.to_vec()).collect::<Vec<_>>(),
            expected,
            "{case}"
        );
        let leaf = &leaves[index as usize];
        merkle::verify_inclusion(leaf, index, size as u64, &refs(&expected), &root_of(size))
            .unwrap_or_else(|e| panic!("{case}: {e}"));
    }
    for case in list("consistency") {
        let (old, new) = (
            int(case, "old_size") as usize,
            int(case, "new_size") as usize,
        );
        let expected = hex_list(&case["proof"]);
        let proof = merkle::consistency_proof(&leaves[..new], old as u64).unwrap();
        assert_eq!(
            proof.iter().map(|n| n.to_vec()).collect::<Vec<_>>(),
            expected,
            "{case}"
        );
        let (old_root, new_root) = (root_of(old), root_of(new));
        merkle::verify_consistency(
            old as u64,
            new as u64,
            &old_root,
            &new_root,
            &refs(&expected),
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    }
    for case in list("inclusion_negative") {
        let negatives = [
            ("index", Code::IndexOutOfRange),
            ("size", Code::SizeInvalid),
        ];
        let result = negative_refusal(case, negatives).unwrap_or_else(|| {
            merkle::verify_inclusion(
                &bytes(case, "leaf"),
                int(case, "index") as u64,
                int(case, "size") as u64,
                &refs(&hex_list(&case["proof"])),
                &bytes(case, "root"),
            )
        });
        outcome(case, result);
    }
    for case in list("consistency_negative") {
        let negatives = [
            ("old_size", Code::SizeInvalid),
            ("new_size", Code::SizeInvalid),
        ];
        let result = negative_refusal(case, negatives).unwrap_or_else(|| {
            merkle::verify_consistency(
                int(case, "old_size") as u64,
                int(case, "new_size") as u64,
                &bytes(case, "old_root"),
                &bytes(case, "new_root"),
                &refs(&hex_list(&case["proof"])),
            )
        });
        outcome(case, result);
    }
}
