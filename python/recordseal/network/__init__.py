"""The HTTP clients of the transparency-log family: what the sealer (and ``recordseal
doctor``) use to reach witnesses and time-stamping authorities.

- :mod:`.witness_client` — the async c2sp.org/tlog-witness client (:class:`WitnessClient`);
- :mod:`.tsa_client` — the RFC 3161 client (:func:`timestamp_root`).

Both verify what they receive with :mod:`recordseal.tlog` before returning it, and refuse with
its :class:`TlogError`; the offline verifier imports neither (docs/layers.md).
"""
