//! Where each append of a transaction goes: the placement rules of
//! `python/recordseal/storage/placing.py` (the reference, and the oracle of the tests), for
//! every append of a transaction in one native pass.
//!
//! For each append in order:
//!
//! 1. its idempotency key stored (or placed earlier in this transaction): the same request
//!    hash is `Replayed` (its record is the answer), another `KeyReused`;
//! 2. its subject must be stored with the claimed handle, else `SubjectRace`, and every later
//!    append of the same stream in the same call is `Deferred`;
//! 3. an erased subject: `SubjectErased`;
//! 4. a stream whose stored head is behind what the service signed for it: `Fenced`, and so
//!    is every later append of that stream in the transaction;
//! 5. otherwise it is placed at its stream's head (the stream's slot, in the order streams are
//!    first placed).
//!
//! Rule 4 needs the stream's head and the service's check of it, which only the caller has:
//! [`place`] asks its `check` once per stream, at the first append of the stream that rules
//! 1 to 3 let through (where the reference asks it: the check may fence the stream).

use std::collections::{HashMap, HashSet};

/// One append, borrowed from the caller.
pub struct Append<'a> {
    pub stream: i64,
    pub subject_index: &'a [u8],
    pub subject_ref: &'a str,
    /// The idempotency key and the request hash it came with.
    pub key: Option<(&'a str, &'a [u8])>,
    pub record_id: &'a str,
}

/// The appends of one call and their tenant: a call's records keep their order.
pub struct Call<'a> {
    pub tenant: &'a str,
    pub appends: Vec<Append<'a>>,
}

/// What the caller has read under its locks.
#[derive(Default)]
pub struct Lookups<'a> {
    /// (tenant, key) -> (request hash, record id)
    pub keys: HashMap<(&'a str, &'a str), (&'a [u8], &'a str)>,
    /// (tenant, subject index) -> (handle, whether its key is live)
    pub subjects: HashMap<(&'a str, &'a [u8]), (&'a str, bool)>,
}

/// The decision on one append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision<'a> {
    /// Placed: its index among the placed appends.
    Placed(usize),
    Deferred,
    Replayed(&'a str),
    KeyReused(&'a str),
    SubjectRace(&'a str),
    SubjectErased(&'a str),
    Fenced(i64),
}

/// Every append decided.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decided<'a> {
    /// One decision per append, in the order of the calls' appends.
    pub decisions: Vec<Decision<'a>>,
    /// Of each placed append: the slot (index into `streams`) of its stream.
    pub slots: Vec<usize>,
    /// The streams of the slots, in the order they were first placed.
    pub streams: Vec<i64>,
    /// The idempotency keys of the records placed, in order: (tenant, key, hash, record id).
    pub keys: Vec<(&'a str, &'a str, &'a [u8], &'a str)>,
}

/// Decide every append of `calls` in order (module docs). `check(stream, call, append)`
/// answers rule 4 for a stream (true: behind, fenced), asked at most once per stream; its
/// error ends the placement.
pub fn place<'a, E>(
    calls: &[Call<'a>],
    lookups: &Lookups<'a>,
    mut check_stream: impl FnMut(i64, usize, usize) -> Result<bool, E>,
) -> Result<Decided<'a>, E> {
    let mut out = Decided::default();
    let mut slot_of: HashMap<i64, usize> = HashMap::new();
    let mut fenced: HashSet<i64> = HashSet::new();
    let mut placed_keys: HashMap<(&str, &str), (&[u8], &str)> = HashMap::new();
    let mut placed = 0usize;
    for (c, call) in calls.iter().enumerate() {
        let tenant = call.tenant;
        let mut raced: HashSet<i64> = HashSet::new();
        for (a, append) in call.appends.iter().enumerate() {
            let stream = append.stream;
            if raced.contains(&stream) {
                out.decisions.push(Decision::Deferred);
                continue;
            }
            let mut refusal = check(tenant, append, lookups, &placed_keys);
            if refusal.is_none() && !slot_of.contains_key(&stream) {
                if fenced.contains(&stream) || check_stream(stream, c, a)? {
                    fenced.insert(stream);
                    refusal = Some(Decision::Fenced(stream));
                } else {
                    slot_of.insert(stream, out.streams.len());
                    out.streams.push(stream);
                }
            }
            if let Some(refusal) = refusal {
                if matches!(refusal, Decision::SubjectRace(_)) {
                    raced.insert(stream);
                }
                out.decisions.push(refusal);
                continue;
            }
            if let Some((key, hash)) = append.key {
                placed_keys.insert((tenant, key), (hash, append.record_id));
                out.keys.push((tenant, key, hash, append.record_id));
            }
            out.decisions.push(Decision::Placed(placed));
            out.slots.push(slot_of[&stream]);
            placed += 1;
        }
    }
    Ok(out)
}

/// Rules 1 to 3 for one append: its refusal, or `None` if it may be placed.
fn check<'a>(
    tenant: &'a str,
    append: &Append<'a>,
    lookups: &Lookups<'a>,
    placed_keys: &HashMap<(&'a str, &'a str), (&'a [u8], &'a str)>,
) -> Option<Decision<'a>> {
    if let Some((key, hash)) = append.key {
        let known = placed_keys
            .get(&(tenant, key))
            .or_else(|| lookups.keys.get(&(tenant, key)));
        if let Some(&(stored_hash, record_id)) = known {
            if stored_hash != hash {
                return Some(Decision::KeyReused(key));
            }
            return Some(Decision::Replayed(record_id));
        }
    }
    match lookups.subjects.get(&(tenant, append.subject_index)) {
        Some(&(handle, _)) if handle != append.subject_ref => {
            Some(Decision::SubjectRace(append.subject_ref))
        }
        None => Some(Decision::SubjectRace(append.subject_ref)),
        Some(&(_, false)) => Some(Decision::SubjectErased(append.subject_ref)),
        Some(&(_, true)) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append<'a>(stream: i64, subject: &'a str, id: &'a str, key: Option<&'a str>) -> Append<'a> {
        Append {
            stream,
            subject_index: subject.as_bytes(),
            subject_ref: subject,
            key: key.map(|k| (k, b"h".as_slice())),
            record_id: id,
        }
    }

    fn lookups<'a>() -> Lookups<'a> {
        let mut lookups = Lookups::default();
        lookups.subjects.insert(("t", b"a".as_slice()), ("a", true));
        lookups
            .subjects
            .insert(("t", b"e".as_slice()), ("e", false));
        lookups
            .keys
            .insert(("t", "old"), (b"h".as_slice(), "r-old"));
        lookups
            .keys
            .insert(("t", "reused"), (b"other".as_slice(), "r-x"));
        lookups
    }

    #[test]
    fn each_rule_refuses_alone_and_the_rest_are_placed_in_order() {
        let calls = [Call {
            tenant: "t",
            appends: vec![
                append(1, "a", "r1", None),
                append(1, "a", "r2", Some("old")),
                append(2, "a", "r3", Some("reused")),
                append(2, "e", "r4", None),
                append(2, "a", "r5", Some("new")),
                append(1, "a", "r6", Some("new")),
                append(1, "a", "r7", None),
            ],
        }];
        let mut asked = Vec::new();
        let decided = place(&calls, &lookups(), |stream, call, append| {
            asked.push((stream, call, append));
            Ok::<bool, ()>(false)
        })
        .unwrap();
        // Stream 2's first appends are refused by rules 1 and 3: its check is asked at r5.
        assert_eq!(asked, [(1, 0, 0), (2, 0, 4)]);
        use Decision::*;
        assert_eq!(
            decided.decisions,
            [
                Placed(0),
                Replayed("r-old"),
                KeyReused("reused"),
                SubjectErased("e"),
                Placed(1),
                Replayed("r5"),
                Placed(2)
            ]
        );
        assert_eq!(decided.slots, [0, 1, 0]);
        assert_eq!(decided.streams, [1, 2]);
        assert_eq!(decided.keys, [("t", "new", b"h".as_slice(), "r5")]);
    }

    #[test]
    fn a_race_defers_its_stream_in_its_call_and_a_fence_holds_for_the_transaction() {
        let calls = [
            Call {
                tenant: "t",
                appends: vec![
                    append(1, "new", "r1", None),
                    append(1, "a", "r2", None),
                    append(3, "a", "r3", None),
                    append(3, "a", "r4", None),
                ],
            },
            Call {
                tenant: "t",
                appends: vec![append(1, "a", "r5", None), append(3, "a", "r6", None)],
            },
        ];
        let mut asked = Vec::new();
        let decided = place(&calls, &lookups(), |stream, _, _| {
            asked.push(stream);
            Ok::<bool, ()>(stream == 3)
        })
        .unwrap();
        assert_eq!(asked, [3, 1], "each stream asked once");
        use Decision::*;
        assert_eq!(
            decided.decisions,
            [
                SubjectRace("new"),
                Deferred,
                Fenced(3),
                Fenced(3),
                Placed(0),
                Fenced(3)
            ]
        );
        assert_eq!((decided.slots, decided.streams), (vec![0], vec![1]));
    }

    #[test]
    fn a_failed_check_ends_the_placement() {
        let calls = [Call {
            tenant: "t",
            appends: vec![append(1, "a", "r1", None)],
        }];
        assert_eq!(
            place(&calls, &lookups(), |_, _, _| Err("down")),
            Err("down")
        );
    }
}
