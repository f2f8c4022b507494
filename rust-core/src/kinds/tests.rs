use super::*;

fn enc(kind: &str, value: Value<'_>) -> std::result::Result<String, &'static str> {
    let kind = Kind::from_name(kind).map_err(|e| e.code.as_str())?;
    let mut out = Vec::new();
    encode(kind, value, &mut out).map_err(|e| e.code.as_str())?;
    Ok(String::from_utf8(out).unwrap())
}

fn ok(kind: &str, value: Value<'_>) -> String {
    enc(kind, value).unwrap_or_else(|code| panic!("{kind} {value:?}: {code}"))
}

#[test]
fn kind_names_are_sorted_and_round_trip() {
    let names: Vec<&str> = ALL.iter().map(|k| k.name()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    for kind in ALL {
        assert_eq!(Kind::from_name(kind.name()).unwrap(), kind);
    }
    assert_eq!(enc("Free", Value::Null), Err("unknown_kind"));
}

#[test]
fn free_tags_every_json_kind() {
    assert_eq!(ok("free", Value::Str("1")), "str:1");
    assert_eq!(ok("free", Value::Num(1.0)), "num:1");
    assert_eq!(ok("free", Value::Bool(false)), "bool:false");
    assert_eq!(ok("free", Value::Null), "null:");
    assert_eq!(ok("free", Value::EmptyObject), "obj:{}");
    assert_eq!(ok("free", Value::EmptyArray), "arr:[]");
    assert_eq!(ok("free", Value::Str("e\u{301}")), "str:e\u{301}");
    assert_eq!(enc("free", Value::NonEmptyContainer), Err("value_type"));
}

#[test]
fn number_checks_come_before_type_checks() {
    for kind in ["free", "money", "text", "boolean"] {
        assert_eq!(enc(kind, Value::Num(f64::NAN)), Err("number_out_of_range"));
        assert_eq!(
            enc(kind, Value::Num(f64::INFINITY)),
            Err("number_out_of_range")
        );
        assert_eq!(
            enc(kind, Value::Num(9007199254740992.0)),
            Err("integer_out_of_range")
        );
        assert_eq!(enc(kind, Value::Num(-1e300)), Err("integer_out_of_range"));
    }
    assert_eq!(
        ok("free", Value::Num(-9007199254740991.0)),
        "num:-9007199254740991"
    );
}

#[test]
fn numbers() {
    assert_eq!(ok("money", Value::Num(1500.0)), "money:1500");
    assert_eq!(ok("money", Value::Num(-0.0)), "money:0");
    assert_eq!(enc("money", Value::Num(1.5)), Err("money_fraction"));
    assert_eq!(enc("money", Value::Str("1")), Err("value_type"));
    assert_eq!(ok("integer", Value::Num(1e15)), "int:1000000000000000");
    assert_eq!(enc("integer", Value::Num(0.5)), Err("not_integer"));
    assert_eq!(ok("decimal", Value::Num(1.5e-7)), "dec:1.5e-7");
    assert_eq!(ok("decimal", Value::Num(2.0)), "dec:2");
    assert_eq!(enc("decimal", Value::Bool(true)), Err("value_type"));
}

#[test]
fn money_refusals_say_what_to_send() {
    let message = |value| {
        let mut out = Vec::new();
        encode(Kind::Money, value, &mut out).unwrap_err().message
    };
    assert_eq!(
        message(Value::Num(12.5)),
        "money is a whole number of minor units (cents): 12.50 is sent as 1250"
    );
    assert_eq!(
        message(Value::Str("12.50")),
        "the kind money takes a whole number of minor units (cents)"
    );
}

#[test]
fn coordinates() {
    assert_eq!(ok("lat6", Value::Num(48.8583701)), "lat6:48.858370");
    assert_eq!(ok("lat9", Value::Num(-90.0)), "lat9:-90.000000000");
    assert_eq!(ok("lon6", Value::Num(2.3456795)), "lon6:2.345680");
    assert_eq!(
        enc("lat6", Value::Num(90.0000001)),
        Err("coordinate_out_of_range")
    );
    assert_eq!(
        enc("lon6", Value::Num(-180.5)),
        Err("coordinate_out_of_range")
    );
    assert_eq!(ok("lon6", Value::Num(180.0)), "lon6:180.000000");
    assert_eq!(enc("lat9", Value::Null), Err("value_type"));
}

#[test]
fn strings() {
    assert_eq!(ok("text", Value::Str("e\u{301}")), "txt:\u{e9}");
    assert_eq!(ok("text", Value::Str("\u{212b}")), "txt:\u{c5}");
    assert_eq!(ok("text", Value::Str("plain")), "txt:plain");
    assert_eq!(ok("boolean", Value::Bool(true)), "bool:true");
    assert_eq!(enc("boolean", Value::Num(1.0)), Err("value_type"));
    assert_eq!(enc("text", Value::EmptyObject), Err("value_type"));
    assert_eq!(enc("text", Value::UnencodableStr), Err("lone_surrogate"));
    assert_eq!(enc("uuid", Value::UnencodableStr), Err("lone_surrogate"));
    assert_eq!(enc("free", Value::UnencodableStr), Err("lone_surrogate"));
    assert_eq!(enc("integer", Value::UnencodableStr), Err("value_type"));
}

#[test]
fn currency() {
    assert_eq!(ok("currency", Value::Str("EUR")), "cur:EUR");
    assert_eq!(ok("currency", Value::Str("DEM")), "cur:DEM");
    assert_eq!(ok("currency", Value::Str("eUr")), "cur:EUR");
    for bad in [
        "XXQ", "EURO", "EU", "", "ÉUR", "#", "ınr", "ſek", "E1R", " EU",
    ] {
        assert_eq!(
            enc("currency", Value::Str(bad)),
            Err("currency_invalid"),
            "{bad}"
        );
    }
}

#[test]
fn dates_and_timestamps() {
    assert_eq!(ok("date", Value::Str("2024-02-29")), "date:2024-02-29");
    assert_eq!(enc("date", Value::Str("2023-02-29")), Err("date_invalid"));
    assert_eq!(
        ok("timestamp", Value::Str("2024-02-29t23:30:00.1200+01:00")),
        "time:2024-02-29T22:30:00.12Z"
    );
    assert_eq!(
        enc("timestamp", Value::Str("2024-02-29")),
        Err("timestamp_invalid")
    );
}

#[test]
fn uuids() {
    let canonical = "uuid:0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    for spelling in [
        "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "0193A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B",
        "{0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}",
        "urn:uuid:0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "URN:UUID:0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "0193a1b2c3d47e5f8a9b0c1d2e3f4a5b",
    ] {
        assert_eq!(ok("uuid", Value::Str(spelling)), canonical, "{spelling}");
    }
    assert_eq!(
        ok("uuid", Value::Str("ffffffff-ffff-ffff-ffff-ffffffffffff")),
        "uuid:ffffffff-ffff-ffff-ffff-ffffffffffff"
    );
    for bad in [
        "{0193a1b2c3d47e5f8a9b0c1d2e3f4a5b}",
        "urn:uuid:0193a1b2c3d47e5f8a9b0c1d2e3f4a5b",
        "urn:uuid:{0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}",
        "0193a1b2-c3d47e5f-8a9b-0c1d-2e3f4a5b",
        "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g",
        "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5",
        " 0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "{0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}",
    ] {
        assert_eq!(enc("uuid", Value::Str(bad)), Err("uuid_invalid"), "{bad}");
    }
}

#[test]
fn digests() {
    let upper = format!("sha256:{}", "AB".repeat(32));
    assert_eq!(
        ok("digest", Value::Str(&upper)),
        format!("digest:sha256:{}", "ab".repeat(32))
    );
    for bad in [
        format!("sha256:{}", "a".repeat(63)),
        format!("sha256:{}", "a".repeat(65)),
        format!("SHA256:{}", "a".repeat(64)),
        format!("sha256:{}g", "a".repeat(63)),
        "a".repeat(64),
    ] {
        assert_eq!(
            enc("digest", Value::Str(&bad)),
            Err("digest_invalid"),
            "{bad}"
        );
    }
}
