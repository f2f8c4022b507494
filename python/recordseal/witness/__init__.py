"""A c2sp.org/tlog-witness witness: the process ``recordseal witness serve`` runs.

- :mod:`.witness` — the protocol's rules: cosign a checkpoint only when it extends the
  latest one cosigned for its log;
- :mod:`.state` — the witness's durable memory, one file per log;
- :mod:`.families` — log families (a log key for every log under a name) and their file;
- :mod:`.keys` — the witness's key files, by algorithm;
- :mod:`.app`, :mod:`.cli` — the witness over HTTP (Litestar, served by granian) and its
  commands.

It speaks the formats of :mod:`recordseal.tlog` and refuses with its :class:`TlogError`
codes (docs/tlog.md, "The witness"); the offline verifier imports none of it.
"""
