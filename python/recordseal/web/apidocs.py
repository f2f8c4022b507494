"""The API documentation pages, rendered on the server without script.

``/schema``, ``/schema/swagger`` and ``/schema/redoc`` all answer one HTML page made from the
OpenAPI document: every operation with its summary, parameters, request body (and its example)
and answers, schemas shown as JSON with every ``$ref`` replaced by the schema it names, so a
reader never looks a name up. It loads nothing but the panel's own style sheet, so it works offline
and under the pages' Content-Security-Policy (``web/headers.py``); Litestar's default pages
load Swagger UI and ReDoc from public CDNs instead. The machine-readable document stays at
``/schema/openapi.json`` (and ``.yaml``).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, YamlRenderPlugin

from recordseal.web.site import STYLE_SHEET, site_header

SCHEMAS = "#/components/schemas/"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


class PlainDocsPlugin(OpenAPIRenderPlugin):
    """The scriptless documentation page at ``/``, ``/swagger`` and ``/redoc`` of ``/schema``."""

    def __init__(self) -> None:
        super().__init__(path=["/", "/swagger", "/redoc"], favicon="", style="")

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        info = openapi_schema.get("info", {})
        title = escape(str(info.get("title", "API")))
        parts = [
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>API · {title}</title>\n"
            f'<link rel="stylesheet" href="{STYLE_SHEET}">\n</head>\n'
            f'<body class="docs">\n{site_header("/schema")}<main id="main">\n'
            f"<h1>{title} {escape(str(info.get('version', '')))}</h1>\n"
            '<p>The OpenAPI document: <a href="/schema/openapi.json">openapi.json</a>. '
            "Errors are RFC 9457 <code>application/problem+json</code>.</p>\n"
        ]
        schemas = openapi_schema.get("components", {}).get("schemas", {})
        for path, item in resolved(openapi_schema.get("paths", {}), schemas).items():
            for method in METHODS:
                operation = item.get(method)
                if operation is not None:
                    parts.append(_operation(method, path, operation))
        parts.append("</main>\n</body>\n</html>\n")
        return "".join(parts).encode("utf-8")


def _operation(method: str, path: str, operation: dict[str, Any]) -> str:
    anchor = escape(f"{method}-{path}", quote=True)
    parts = [
        f'<section class="card" id="{anchor}">\n'
        f"<h2><code>{escape(method.upper())} {escape(path)}</code></h2>\n"
    ]
    for text in (operation.get("summary"), operation.get("description")):
        if text:
            parts.append(f"<p>{escape(str(text))}</p>\n")
    if operation.get("security"):
        schemes = ", ".join(name for requirement in operation["security"] for name in requirement)
        parts.append(f"<p>Authentication: <code>{escape(schemes)}</code> token.</p>\n")
    parameters = operation.get("parameters") or []
    if parameters:
        rows = "".join(
            f"<tr><td><code>{escape(str(p.get('name')))}</code></td>"
            f"<td>{escape(str(p.get('in')))}</td>"
            f"<td>{'yes' if p.get('required') else 'no'}</td>"
            f"<td>{escape(str(p.get('description') or ''))}</td></tr>\n"
            for p in parameters
        )
        parts.append(
            "<table><thead><tr><th>Parameter</th><th>In</th><th>Required</th>"
            f"<th>Description</th></tr></thead>\n<tbody>\n{rows}</tbody></table>\n"
        )
    body = operation.get("requestBody")
    if body:
        parts.append("<h3>Request body</h3>\n" + _content(body.get("content", {})))
    for status, answer in (operation.get("responses") or {}).items():
        parts.append(
            f"<h3>{escape(str(status))}: {escape(str(answer.get('description') or ''))}</h3>\n"
            + _content(answer.get("content", {}))
        )
    parts.append("</section>\n")
    return "".join(parts)


def resolved(node: Any, schemas: dict[str, Any], inside: tuple[str, ...] = ()) -> Any:
    """``node`` with each ``$ref`` to ``#/components/schemas/<name>`` replaced by that schema
    (itself resolved). A schema met again inside itself is named, not repeated."""
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(SCHEMAS):
            name = reference[len(SCHEMAS) :]
            if name in inside or name not in schemas:
                return {"title": name, "description": f"the schema {name} (recursive)"}
            return resolved(schemas[name], schemas, (*inside, name))
        return {key: resolved(value, schemas, inside) for key, value in node.items()}
    if isinstance(node, list):
        return [resolved(item, schemas, inside) for item in node]
    return node


def _content(content: dict[str, Any]) -> str:
    return "".join(
        f"<p><code>{escape(media)}</code></p>\n"
        f"<pre>{escape(json.dumps(entry.get('schema', {}), indent=2))}</pre>\n"
        + _examples(entry.get("examples") or {})
        for media, entry in content.items()
    )


def _examples(examples: dict[str, Any]) -> str:
    """A refusal's problem codes (the keys of its examples, ``web/openapi.py``), or a request
    body's examples, shown whole."""
    if not examples:
        return ""
    if all("code" in (example.get("value") or {}) for example in examples.values()):
        return _codes(examples)
    return "".join(
        f"<p>Example: {escape(name)}</p>\n"
        f"<pre>{escape(json.dumps(example.get('value'), indent=2))}</pre>\n"
        for name, example in examples.items()
    )


def _codes(examples: dict[str, Any]) -> str:
    """A refusal's problem codes: the keys of its examples (``web/openapi.py``)."""
    if not examples:
        return ""
    codes = ", ".join(f"<code>{escape(code)}</code>" for code in examples)
    return f"<p>Codes: {codes}</p>\n"


def docs_plugins() -> list[OpenAPIRenderPlugin]:
    """The documentation page and the document itself (JSON and YAML)."""
    return [PlainDocsPlugin(), JsonRenderPlugin(), YamlRenderPlugin()]
