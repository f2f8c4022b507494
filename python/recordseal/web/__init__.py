"""The HTTP surface: one Litestar application (``create_app``)."""
