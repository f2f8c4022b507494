"""Key material of the service: signing keys, the key-encryption key, subject keys."""
