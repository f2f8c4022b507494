"""Proxy fleets (spec panel 2.5, 6, 9): the fleet manifest and its reloads, tenant-stamped
audit events, and the daily transparency log files of each (tenant, fleet) log."""
