use super::spans::{number_type, Spans};
use super::*;
use crate::jcs;

const RECORD: &str = r#"{"stream":"orders","record_type":"order.placed","occurred_at":"2026-11-21T09:00:00+01:00","subject_id":"c-1","payload":{"b":1.0,"a":[true]}}"#;

fn canonical(node: &Node<'_>) -> String {
    let mut out = Vec::new();
    jcs::write(node, &mut out);
    String::from_utf8(out).unwrap()
}

fn refusal(error: &Error) -> (&'static str, String, Option<&str>) {
    (
        error.code.as_str(),
        error.message.clone(),
        error.field.as_deref(),
    )
}

fn record_refusal(body: &str) -> (&'static str, String, Option<&str>) {
    let error = read_record(body.as_bytes(), None).unwrap_err();
    let (code, message, field) = refusal(&error);
    (
        code,
        message,
        field.map(|f| Box::leak(f.to_owned().into_boxed_str()) as &str),
    )
}

#[test]
fn a_record_is_read_with_its_envelope_and_payload_tree() {
    let read = read_record(RECORD.as_bytes(), None).unwrap();
    assert_eq!(read.stream, "orders");
    assert_eq!(read.record_type, "order.placed");
    assert_eq!(read.subject_id, "c-1");
    assert_eq!(read.occurred_at, "2026-11-21T08:00:00Z");
    assert_eq!(canonical(&read.payload), r#"{"a":[true],"b":1}"#);
    assert!(read.refusal.is_none() && read.idempotency.is_none() && read.payload_len.is_none());
}

#[test]
fn a_single_post_is_hashed_whole() {
    let read = read_record(RECORD.as_bytes(), Some("k-1")).unwrap();
    let (key, hash) = read.idempotency.unwrap();
    assert_eq!(key, "k-1");
    assert_eq!(hash, digest(RECORD.as_bytes()));
}

#[test]
fn batch_items_are_hashed_as_sent_and_keyed_by_index() {
    let items = [RECORD, " \n{\"stream\" : \"s\\u0041\",\"record_type\":\"t\",\"occurred_at\":\"x\",\"subject_id\":\"s\",\"payload\":{\"s\":\"a\\\"]}\"}}"];
    let body = format!("{{ \"records\" : [ {} , {}\t] }}", items[0], items[1]);
    let read = read_batch(body.as_bytes(), Some("b")).unwrap();
    for (index, item) in read.iter().enumerate() {
        let Item::Record(record) = item else {
            panic!("{item:?}")
        };
        let (key, hash) = record.idempotency.clone().unwrap();
        assert_eq!(key, format!("b#{index}"));
        assert_eq!(hash, digest(items[index].trim().as_bytes()));
    }
    let Item::Record(second) = &read[1] else {
        unreachable!()
    };
    assert_eq!(second.stream, "sA");
    let refusal = second.refusal.as_ref().unwrap();
    assert_eq!(refusal.code, Code::OccurredAtInvalid);
}

#[test]
fn shapes_are_refused_in_msgspecs_words() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("[]", "Expected `object`, got `array`", None),
        ("-0", "Expected `object`, got `int`", None),
        ("-0.0", "Expected `object`, got `float`", None),
        (
            "{}",
            "Object missing required field `stream`",
            Some("stream"),
        ),
        (
            r#"{"stream":18446744073709551615}"#,
            "Expected `str`, got `int`",
            Some("stream"),
        ),
        (
            r#"{"stream":18446744073709551616}"#,
            "Expected `str`, got `float`",
            Some("stream"),
        ),
        (
            r#"{"stream":-9223372036854775809}"#,
            "Expected `str`, got `float`",
            Some("stream"),
        ),
        (
            r#"{"zz":1,"stream":2}"#,
            "Object contains unknown field `zz`",
            None,
        ),
        (
            r#"{"stream":2,"zz":1}"#,
            "Expected `str`, got `int`",
            Some("stream"),
        ),
        (
            r#"{"payload":1,"subject_id":"x"}"#,
            "Object missing required field `stream`",
            Some("stream"),
        ),
        (
            r#"{"stream":"a","record_type":"b","occurred_at":"c","subject_id":"d"}"#,
            "Object missing required field `payload`",
            Some("payload"),
        ),
        (
            r#"{"subject_id":null}"#,
            "Expected `str`, got `null`",
            Some("subject_id"),
        ),
        (
            r#"{"a\"b":1}"#,
            "Object contains unknown field `a\"b`",
            None,
        ),
    ];
    for (body, message, field) in cases {
        let (code, got, got_field) = record_refusal(body);
        assert_eq!(
            (code, got.as_str(), got_field),
            ("request_invalid", *message, *field),
            "{body}"
        );
    }
}

#[test]
fn the_batch_envelope_and_its_size() {
    let refused = |body: &str| {
        let error = read_batch(body.as_bytes(), None).unwrap_err();
        (error.code.as_str(), error.message, error.field)
    };
    assert_eq!(refused("{}").1, "Object missing required field `records`");
    assert_eq!(
        refused(r#"{"records":1.5}"#).1,
        "Expected `array`, got `float`"
    );
    assert_eq!(
        refused(r#"{"records":[],"x":1}"#).1,
        "Object contains unknown field `x`"
    );
    assert_eq!(refused(r#"{"records":[]}"#).0, "batch_size_invalid");
    let thousand_and_one = format!("{{\"records\":[{}1]}}", "1,".repeat(1000));
    assert_eq!(refused(&thousand_and_one).0, "batch_size_invalid");
    // The size first, then the key.
    let error = read_batch(br#"{"records":[]}"#, Some("bad key")).unwrap_err();
    assert_eq!(error.code, Code::BatchSizeInvalid);
    let error = read_batch(br#"{"records":[1]}"#, Some("bad key")).unwrap_err();
    assert_eq!(error.code, Code::IdempotencyKeyInvalid);
}

#[test]
fn items_of_another_shape_are_refused_alone() {
    let body = format!(r#"{{"records":[1e0, {RECORD}, {{"stream":7}}]}}"#);
    let read = read_batch(body.as_bytes(), None).unwrap();
    let Item::Refused(first) = &read[0] else {
        panic!()
    };
    assert_eq!(first.message, "Expected `object`, got `float`");
    assert!(matches!(read[1], Item::Record(_)));
    let Item::Refused(third) = &read[2] else {
        panic!()
    };
    assert_eq!(
        (first.field.as_deref(), third.field.as_deref()),
        (None, Some("stream"))
    );
    assert_eq!(third.message, "Expected `str`, got `int`");
}

#[test]
fn the_reader_refuses_the_body_first() {
    let error = read_record(br#"{"stream":"a","stream":"b"}"#, Some("bad key")).unwrap_err();
    assert_eq!(error.code, Code::DuplicateMember);
    let error = read_batch(b"{\"records\":[", None).unwrap_err();
    assert_eq!(error.code, Code::InvalidJson);
}

#[test]
fn keys_are_checked() {
    for key in ["", "has space", "a#b", "é", &"x".repeat(256)] {
        let error = read_record(RECORD.as_bytes(), Some(key)).unwrap_err();
        assert_eq!(error.code, Code::IdempotencyKeyInvalid, "{key:?}");
        assert_eq!(error.field.as_deref(), Some("Idempotency-Key"));
    }
    assert!(read_record(RECORD.as_bytes(), Some(&"A.b_c:d-9".repeat(28))).is_ok());
}

#[test]
fn envelope_rules_in_their_order() {
    let with = |record_type: &str, subject_id: &str, occurred_at: &str| {
        let body = format!(
            r#"{{"stream":"s","record_type":{},"occurred_at":{},"subject_id":{},"payload":{{}}}}"#,
            serde_json::to_string(record_type).unwrap(),
            serde_json::to_string(occurred_at).unwrap(),
            serde_json::to_string(subject_id).unwrap(),
        );
        let read = read_record(body.as_bytes(), None).unwrap();
        read.refusal.map(|error| error.code.as_str())
    };
    let ok = "2026-11-21T08:00:00Z";
    assert_eq!(with("t", "s", ok), None);
    assert_eq!(with("", "", "x"), Some("record_type_invalid"));
    assert_eq!(with("t\u{85}", "s", ok), Some("record_type_invalid"));
    assert_eq!(with(&"é".repeat(128), "s", ok), None);
    assert_eq!(with(&"é".repeat(129), "s", ok), Some("record_type_invalid"));
    assert_eq!(
        with("t", &"\u{1f600}".repeat(257), "x"),
        Some("subject_id_invalid")
    );
    assert_eq!(
        with("t", "s", "2026-02-30T00:00:00Z"),
        Some("occurred_at_invalid")
    );
}

#[test]
fn payload_lengths_count_the_text_as_sent() {
    let spaces = " ".repeat(MAX_PAYLOAD_LEN);
    let body = format!(
        r#"{{"payload": {{"a" :{spaces}1}} ,"stream":"s","record_type":"t","occurred_at":"x","subject_id":"s"}}"#
    );
    let read = read_record(body.as_bytes(), None).unwrap();
    assert_eq!(read.payload_len, Some(MAX_PAYLOAD_LEN + 8));
    let batch = format!(r#"{{"records":[{body},{RECORD}]}}"#);
    let read = read_batch(batch.as_bytes(), None).unwrap();
    let lens: Vec<_> = read
        .iter()
        .map(|item| match item {
            Item::Record(record) => record.payload_len,
            Item::Refused(_) => None,
        })
        .collect();
    assert_eq!(lens, [Some(MAX_PAYLOAD_LEN + 8), Some(20)]);
}

#[test]
fn spans_of_values_in_a_valid_text() {
    let text = br#" { "a\"}" : [ "x\\" , {"y":[1,2]} , -1.5e3 ] , "b":null } "#;
    let spans = Spans::new(text);
    let whole = spans.whole();
    assert_eq!(whole, 1..text.len() - 1);
    let members = spans.members(&whole);
    let texts: Vec<&[u8]> = members.iter().map(|span| spans.text(span)).collect();
    assert_eq!(
        texts,
        [&br#"[ "x\\" , {"y":[1,2]} , -1.5e3 ]"#[..], b"null"]
    );
    let elements = spans.elements(&members[0]);
    let texts: Vec<&[u8]> = elements.iter().map(|span| spans.text(span)).collect();
    assert_eq!(texts, [&br#""x\\""#[..], br#"{"y":[1,2]}"#, b"-1.5e3"]);
    let empty = Spans::new(b"[ ]");
    assert!(empty.elements(&empty.whole()).is_empty());
    let empty = Spans::new(b"{}");
    assert!(empty.members(&empty.whole()).is_empty());
}

#[test]
fn number_types_as_msgspec_names_them() {
    for (text, kind) in [
        ("0", "int"),
        ("-0", "int"),
        ("9223372036854775808", "int"),
        ("-9223372036854775808", "int"),
        ("-9223372036854775809", "float"),
        ("18446744073709551615", "int"),
        ("18446744073709551616", "float"),
        ("1".repeat(60).as_str(), "float"),
        ("1.0", "float"),
        ("1e2", "float"),
        ("1E2", "float"),
    ] {
        assert_eq!(number_type(text.as_bytes()), kind, "{text}");
    }
}
