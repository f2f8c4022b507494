"""Operator panel building blocks: the tenant store, its bootstrap file, session cookies, roles.

Spec: operator panel, sections 2.1-2.4 (hierarchy, bootstrap), 2.7-2.8 (principal, cookie),
3 (roles), 7 (tenant store errors). Nothing here imports the web layer.
"""
