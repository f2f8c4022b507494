//! Record ids: UUIDv7 (RFC 9562), as `recordseal.clock.new_record_id` makes them, for the
//! records the pipeline prepares from a request it read (src/request.rs).
//!
//! 48 bits of Unix milliseconds, version 7, 12 random bits, variant 0b10, 62 random bits, as
//! 8-4-4-4-12 lowercase hex: time-ordered, so new rows land at the end of the index.

use std::time::{SystemTime, UNIX_EPOCH};

/// `count` new record ids, their random bits from one call to the operating system.
///
/// Panics only when the operating system has no randomness to give.
pub fn new_record_ids(count: usize) -> Vec<String> {
    let mut random = vec![0u8; count * 10];
    getrandom::fill(&mut random).expect("the operating system's random numbers");
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64);
    random
        .chunks_exact(10)
        .map(|bits| record_id(millis, bits.try_into().unwrap_or_default()))
        .collect()
}

/// The id of `millis` and 80 random bits (the top 12 are rand_a, the low 62 rand_b).
pub fn record_id(millis: u64, random: [u8; 10]) -> String {
    let millis = millis & 0xffff_ffff_ffff;
    let mut wide = [0u8; 16];
    wide[6..].copy_from_slice(&random);
    let bits = u128::from_be_bytes(wide);
    let rand_a = (bits >> 68) as u64;
    let rand_b = (bits & ((1 << 62) - 1)) as u64;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        millis >> 16,
        millis & 0xffff,
        0x7000 | rand_a,
        0x8000 | (rand_b >> 48),
        rand_b & 0xffff_ffff_ffff,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_of_clock_new_record_id() {
        // Python: millis 0x0190c5d2a1b3, urandom 00 01 .. 09 -> this text.
        let id = record_id(0x0190_c5d2_a1b3, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(id, "0190c5d2-a1b3-7000-8203-040506070809");
        let id = record_id(u64::MAX, [0xff; 10]);
        assert_eq!(id, "ffffffff-ffff-7fff-bfff-ffffffffffff");
    }

    #[test]
    fn ids_are_new_and_of_version_7() {
        let ids = new_record_ids(3);
        assert_eq!(ids.len(), 3);
        assert!(ids[0] != ids[1] && ids[1] != ids[2]);
        assert!(ids.iter().all(|id| id.len() == 36 && &id[14..15] == "7"));
    }
}
