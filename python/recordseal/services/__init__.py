"""Services: the record service, tokens; they use storage and the core, never the web layer."""
