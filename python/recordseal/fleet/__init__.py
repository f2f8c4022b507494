"""Proxy fleets (docs/fleets.md, "The manifest"): the fleet manifest and its reloads, tenant-stamped
audit events, and the daily transparency log files of each (tenant, fleet) log."""
