//! `cargo bench --bench record`: the stages of `commit_record` on the payloads of
//! `benchmarks/payloads.py`, without Python's call overhead.

mod common;

use std::hint::black_box;

use common::time;
use recordseal_core::commitment::FieldHasher;
use recordseal_core::declarations::Declarations;
use recordseal_core::{jcs, json, leaves};

const RECORD_1K: &[u8] = br#"{"order_id":"ORD-2026-000123456-WEB-EU-WEST-CHECKOUT-PRIMARY","customer":{"name":"Augusta Ada King, Countess of Lovelace","email":"ada.augusta.lovelace@analytical-engine.example.org","address":{"street":"12 Analytical Engine Road, Flat 4, Dorset House, Marylebone","city":"London","country":"GB"}},"amount_minor":1234567,"currency":"EUR","placed_at":"2026-11-21T08:20:26.123456+01:00","delivery_date":"2026-12-01","items":[{"sku":"SKU-00012-BLUE-XL","qty":3,"unit_minor":19999},{"sku":"SKU-00077-RED-M","qty":1,"unit_minor":1174570}],"location":{"lat":51.5237629,"lon":-0.1584743},"notes":"Leave the parcel with the concierge; ring twice. Fragile: contains glassware. Customer asked for a paper invoice and no plastic packaging whatsoever; deliveries before nine in the morning are refused by the building, and the loading bay at the back is closed on Sundays and public holidays. Call the mobile number on file first.","document":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}"#;

const DECLARATIONS_1K: [(&str, &str); 10] = [
    ("o:/amount_minor", "money"),
    ("o:/currency", "currency"),
    ("o:/placed_at", "timestamp"),
    ("o:/delivery_date", "date"),
    ("oo:/location/lat", "lat6"),
    ("oo:/location/lon", "lon6"),
    ("o:/document", "digest"),
    ("oao:/items/*/qty", "integer"),
    ("oao:/items/*/unit_minor", "money"),
    ("o:/notes", "text"),
];

const RECORD_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

/// 64 objects of 64 numbered members: 4096 fields.
fn record_4096() -> String {
    let group = |g: usize| {
        let fields: Vec<String> = (0..64)
            .map(|f| format!("\"field{f:02}\":{}", (g * 64 + f) * 7))
            .collect();
        format!("\"group{g:02}\":{{{}}}", fields.join(","))
    };
    let groups: Vec<String> = (0..64).map(group).collect();
    format!("{{{}}}", groups.join(","))
}

fn main() {
    let key: Vec<u8> = (0..32).collect();
    let wide = record_4096();
    time("parse, 1 KB", 20_000, || {
        black_box(json::parse(black_box(RECORD_1K)).unwrap());
    });
    time("canonicalize, 1 KB", 20_000, || {
        black_box(jcs::canonicalize(black_box(RECORD_1K)).unwrap());
    });
    time("declarations, 10 patterns", 20_000, || {
        black_box(Declarations::new(black_box(&DECLARATIONS_1K)).unwrap());
    });
    let hasher = FieldHasher::new(&key, RECORD_ID).unwrap();
    let fields: Vec<(&str, &[u8])> = (0..20)
        .map(|i| {
            let path = if i % 2 == 0 {
                "oo:/customer/email"
            } else {
                "oao:/items/0/unit_minor"
            };
            (path, b"str:ada.augusta.lovelace@analytical".as_slice())
        })
        .collect();
    time("salts and commitments, 20 fields", 20_000, || {
        black_box(hasher.commit_fields(fields.len(), |i| black_box(&fields)[i]));
    });
    time("commit_record, 1 KB, 20 fields", 20_000, || {
        let record = leaves::commit_record(RECORD_1K, &[], false, &key, RECORD_ID);
        black_box(record.unwrap());
    });
    let declarations = Declarations::new(&DECLARATIONS_1K).unwrap();
    time(
        "commit_record, 1 KB, 20 fields, 10 declarations",
        20_000,
        || {
            let record = leaves::commit_declared(RECORD_1K, &declarations, false, &key, RECORD_ID);
            black_box(record.unwrap());
        },
    );
    time("commit_record, 4096 fields", 100, || {
        let record = leaves::commit_record(wide.as_bytes(), &[], false, &key, RECORD_ID);
        black_box(record.unwrap());
    });
}
