"""RFC 6962 trees kept as stored nodes, and how a log grows by them (pure hashing: every
backend, the sealer and the proof builders use it; it imports neither storage nor a server)."""
