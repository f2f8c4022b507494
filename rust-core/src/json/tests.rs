use super::*;

fn fault(input: &str) -> (&'static str, Option<String>) {
    let error = parse(input.as_bytes()).expect_err(input);
    (error.code.as_str(), error.field)
}

fn code(input: &str) -> &'static str {
    fault(input).0
}

#[test]
fn scalars_and_containers() {
    assert_eq!(parse(b" null ").unwrap(), Node::Null);
    assert_eq!(parse(b"true").unwrap(), Node::Bool(true));
    assert_eq!(parse(b"-0").unwrap(), Node::Num(0.0));
    assert_eq!(parse(b"\"a\\nb\"").unwrap(), Node::Str("a\nb".into()));
    assert_eq!(parse(b"[]").unwrap(), Node::Arr(vec![]));
    assert!(parse(b"{}").unwrap().is_leaf());
    assert!(!parse(b"[0]").unwrap().is_leaf());
}

#[test]
fn numbers_round_to_nearest_double() {
    assert_eq!(
        parse(b"9007199254740993").unwrap(),
        Node::Num(9007199254740992.0)
    );
    assert_eq!(parse(b"1e-400").unwrap(), Node::Num(0.0));
    assert_eq!(parse(b"0e99999999999999999999").unwrap(), Node::Num(0.0));
    let big = format!("1{}", "0".repeat(400));
    assert_eq!(code(&big), "number_out_of_range");
}

#[test]
fn utf8_and_grammar_faults() {
    assert_eq!(parse(b"[\"\xff\"]").unwrap_err().code, Code::InvalidUtf8);
    assert_eq!(
        parse(b"[\"\xed\xa0\x80\"]").unwrap_err().code,
        Code::InvalidUtf8
    );
    for bad in [
        "",
        " ",
        "\u{feff}{}",
        "[1,]",
        "{\"a\":1,}",
        "01",
        "1.",
        ".5",
        "+1",
        "NaN",
        "Infinity",
        "[1] 2",
        "\"a\tb\"",
        "\"\\x\"",
        "'a'",
        "[",
        "{\"a\" 1}",
        "\"\u{1}\"",
    ] {
        assert_eq!(code(bad), "invalid_json", "{bad:?}");
    }
}

#[test]
fn lone_surrogates() {
    for bad in [
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\ud800x\"",
        "{\"\\udfff\":1}",
        "\"\\ud800\\n\"",
        "[\"\\ud800",
        "[\"\\ud800\\",
        "[\"\\ud800\\u12\"]",
        "[\"\\ud800\\udc0",
        "[\"ok\",\n \"\\ud800\\q\"]",
        "[\"ok\",\n\r\n \"\\ud800",
    ] {
        assert_eq!(fault(bad), ("lone_surrogate", None), "{bad:?}");
    }
    assert_eq!(
        parse("\"\\ud83d\\ude00\"".as_bytes()).unwrap(),
        Node::Str("😀".into())
    );
}

#[test]
fn grammar_faults_before_a_surrogate_stay_first() {
    for bad in [
        "[\"\\x\\ud800\"]",
        "[\"a\u{1}\\ud800\"]",
        "[1,,\"\\ud800\"]",
        "[\"a\"\n\n x \"\\ud800\"]",
        "[\"a\"\n\n,,\n\"\\ud800\"]",
        "[\"\\ud800\\udc00\", \"\\u12\"]",
        "{\"k\":\"\\ud8d\\ude00\"}",
        "[\"\\u\",\"\\ud800\\,0]",
    ] {
        assert_eq!(code(bad), "invalid_json", "{bad:?}");
    }
}

#[test]
fn faults_in_document_order() {
    assert_eq!(code("[1e400, \"\\ud800\"]"), "number_out_of_range");
    assert_eq!(code("[\"\\ud800\", 1e400]"), "lone_surrogate");
    assert_eq!(code("[1e400, x]"), "number_out_of_range");
    assert_eq!(code("[x, 1e400]"), "invalid_json");
    assert_eq!(code("{\"a\":1,\"a\":2,\"b\":1e400}"), "number_out_of_range");
    assert_eq!(code("{\"a\":1,\"a\":2} x"), "duplicate_member");
    assert_eq!(code("{\"a\":1,\"a\":2"), "invalid_json");
}

#[test]
fn fields_of_parse_faults() {
    assert_eq!(fault("1e400"), ("number_out_of_range", None));
    assert_eq!(
        fault("{\"a\":[0,{\"b/c\":-1e999}]}"),
        ("number_out_of_range", Some("oao:/a/1/b~1c".into()))
    );
    assert_eq!(
        fault("{\"x\":{\"b\":1,\"a\":2,\"b\":3,\"a\":4}}"),
        ("duplicate_member", Some("oo:/x/b".into()))
    );
    assert_eq!(
        fault("{\"\":0,\"\":0}"),
        ("duplicate_member", Some("o:/".into()))
    );
}

#[test]
fn depth_limit() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse(ok.as_bytes()).is_ok());
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let expected = format!("{}:{}", "a".repeat(MAX_DEPTH), "/0".repeat(MAX_DEPTH));
    assert_eq!(fault(&deep), ("depth_exceeded", Some(expected)));
    // Reported at the opening bracket: before anything it holds.
    let unclosed = format!("{}1e400", "[".repeat(MAX_DEPTH + 1));
    assert_eq!(code(&unclosed), "depth_exceeded");
    let objects = format!(
        "{}1{}",
        "{\"a\":".repeat(MAX_DEPTH + 1),
        "}".repeat(MAX_DEPTH + 1)
    );
    assert_eq!(code(&objects), "depth_exceeded");
}

#[test]
fn members_come_out_in_rfc8785_order() {
    let Node::Obj(members) = parse("{\"b\":1,\"\u{e000}\":2,\"😀\":3,\"a\":4}".as_bytes()).unwrap()
    else {
        panic!("not an object")
    };
    let names: Vec<&str> = members.iter().map(|m| m.name.as_ref()).collect();
    assert_eq!(names, ["a", "b", "😀", "\u{e000}"]);
}

/// `serde_fault` tells serde_json's errors apart by their text (serde_json is pinned exactly
/// in Cargo.toml for that): the messages it relies on, as the pinned version writes them.
#[test]
fn serde_json_messages_the_codes_rely_on() {
    let text = |input: &str| {
        serde_json::from_str::<serde_json::Value>(input)
            .unwrap_err()
            .to_string()
    };
    assert!(
        text("1e400").starts_with("number out of range"),
        "{}",
        text("1e400")
    );
    let lone = text(r#""\ud800\u0041""#);
    assert!(
        lone.starts_with("lone leading surrogate in hex escape"),
        "{lone}"
    );
    let cut = text(r#""\ud800x""#);
    assert!(cut.starts_with("unexpected end of hex escape"), "{cut}");
}
