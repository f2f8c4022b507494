//! `cargo bench --bench ingest`: the ingest pipeline on 100 records of the 1 KB shape of
//! `benchmarks/payloads.py`, against the commitment and the signature alone (one core).

mod common;

use std::hint::black_box;

use common::time;
use ed25519_dalek::SigningKey;
use recordseal_core::declarations::Declarations;
use recordseal_core::ingest::{self, Head, HeaderFields, Input, Payload};
use recordseal_core::leaves;

const RECORD_1K: &[u8] = br#"{"order_id":"ORD-2026-000123456-WEB-EU-WEST-CHECKOUT-PRIMARY","customer":{"name":"Augusta Ada King, Countess of Lovelace","email":"ada.augusta.lovelace@analytical-engine.example.org","address":{"street":"12 Analytical Engine Road, Flat 4, Dorset House, Marylebone","city":"London","country":"GB"}},"amount_minor":1234567,"currency":"EUR","placed_at":"2026-11-21T08:20:26.123456+01:00","delivery_date":"2026-12-01","items":[{"sku":"SKU-00012-BLUE-XL","qty":3,"unit_minor":19999},{"sku":"SKU-00077-RED-M","qty":1,"unit_minor":1174570}],"location":{"lat":51.5237629,"lon":-0.1584743},"notes":"Leave the parcel with the concierge; ring twice. Fragile: contains glassware. Customer asked for a paper invoice and no plastic packaging whatsoever; deliveries before nine in the morning are refused by the building, and the loading bay at the back is closed on Sundays and public holidays. Call the mobile number on file first.","document":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}"#;

const RECORDS: usize = 100;
const KEY_ID: &str = "0123456789abcdef";
const INGESTED_AT: &str = "2026-11-21T07:20:26.123456Z";

fn main() {
    let salt_key = [3; 32];
    let payload_key = [4; 32];
    let key = SigningKey::from_bytes(&[7; 32]);
    let declarations = Declarations::empty();
    let ids: Vec<String> = (0..RECORDS)
        .map(|i| format!("0193a1b2-c3d4-7e5f-8a9b-{i:012}"))
        .collect();
    let inputs: Vec<Input<'_>> = ids
        .iter()
        .map(|record_id| Input {
            tenant: "acme",
            stream: "orders",
            record_type: "order.placed",
            occurred_at: "2026-11-21T07:20:26.123456Z",
            subject_ref: "sr_0f9d8e7c6b5a",
            record_id,
            payload: Payload::Text(RECORD_1K),
            declarations: &declarations,
            strict: false,
            salt_key: &salt_key,
            payload_key: &payload_key,
        })
        .collect();
    let fields: Vec<HeaderFields> = ingest::prepare_batch(&inputs)
        .into_iter()
        .map(|prepared| prepared.unwrap().fields)
        .collect();
    let refs: Vec<&HeaderFields> = fields.iter().collect();
    let slots: Vec<usize> = (0..RECORDS).map(|i| i % 4).collect();
    let start = [Head {
        next_seq: 1,
        prev: [0; 32],
    }; 4];

    // A header of the size the pipeline signs (about 500 bytes).
    let header = ingest::canonical_header(
        &fields[0],
        &ingest::Place {
            seq: 1,
            prev: &[0; 32],
            key_id: KEY_ID,
            ingested_at: INGESTED_AT,
        },
    );

    time("floor: commit_record + Ed25519, 100 x 1 KB", 50, || {
        for input in &inputs {
            let record = leaves::commit_declared(
                RECORD_1K,
                &declarations,
                false,
                &salt_key,
                input.record_id,
            );
            black_box(record.unwrap());
            black_box(ingest::sign_header(&key, black_box(&header)).unwrap());
        }
    });
    time("prepare_batch, 100 x 1 KB", 50, || {
        black_box(ingest::prepare_batch(black_box(&inputs)));
    });
    time("sign_batch, 100 records, 4 streams", 50, || {
        let mut heads = start;
        let signed = ingest::sign_batch(&key, KEY_ID, INGESTED_AT, &refs, &slots, &mut heads);
        black_box(signed.unwrap());
    });
    time("pipeline (prepare + sign), 100 x 1 KB", 50, || {
        let prepared = ingest::prepare_batch(black_box(&inputs));
        let fields: Vec<&HeaderFields> = prepared
            .iter()
            .map(|prepared| &prepared.as_ref().unwrap().fields)
            .collect();
        let mut heads = start;
        let signed = ingest::sign_batch(&key, KEY_ID, INGESTED_AT, &fields, &slots, &mut heads);
        black_box(signed.unwrap());
    });
}
