"""The API documentation page, rendered on the server without script (docs/api.md, "The page
at /schema").

``/schema``, ``/schema/swagger`` and ``/schema/redoc`` all answer one HTML page made from the
OpenAPI document: the site's header, a table of contents grouped by tag, then each tag's
operations, each with its summary and description (Markdown, rendered by markdown-it-py with
raw HTML escaped), its parameters, its request body and each answer as tables of fields (a
``$ref`` replaced by the schema it names, so a reader never looks a name up), the request's
examples as JSON, and a refusal's problem codes. It loads nothing but the site's style sheet,
so it works offline and under the pages' Content-Security-Policy (``web/headers.py``);
Litestar's default pages load Swagger UI and ReDoc from public CDNs instead. The
machine-readable document stays at ``/schema/openapi.json`` (and ``.yaml``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from html import escape
from typing import Any

from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, YamlRenderPlugin
from markdown_it import MarkdownIt

from recordseal.web.site import STYLE_SHEET, site_header

SCHEMAS = "#/components/schemas/"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
#: How deep a request's or an answer's fields are listed (``items[].sku`` is two).
FIELD_DEPTH = 4
#: CommonMark with raw HTML escaped: a description is text, never markup of its own.
MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


class PlainDocsPlugin(OpenAPIRenderPlugin):
    """The scriptless documentation page at ``/``, ``/swagger`` and ``/redoc`` of ``/schema``."""

    def __init__(self) -> None:
        super().__init__(path=["/", "/swagger", "/redoc"], favicon="", style="")

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return render_page(openapi_schema).encode("utf-8")


def render_page(document: dict[str, Any]) -> str:
    """The whole page of an OpenAPI document."""
    info = document.get("info", {})
    title = escape(str(info.get("title", "API")))
    version = escape(str(info.get("version", "")))
    schemas = document.get("components", {}).get("schemas", {})
    groups = grouped(resolved(document.get("paths", {}), schemas), document.get("tags") or [])
    parts = [
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>API · {title}</title>\n"
        f'<link rel="stylesheet" href="{STYLE_SHEET}">\n</head>\n'
        f'<body class="docs">\n{site_header("/schema")}<main id="main">\n'
        f'<h1>{title} API <span class="version">{version}</span></h1>\n'
        "<p>Every operation of the service, grouped by what it is about. The machine-readable"
        ' document: <a href="/schema/openapi.json">openapi.json</a>. Errors are RFC 9457'
        " <code>application/problem+json</code>, each with a <code>code</code> and the"
        " <code>field</code> it is about.</p>\n",
        _contents(groups),
    ]
    for tag, operations in groups.items():
        parts.append(f'<h2 id="{_tag_anchor(tag)}">{escape(tag.capitalize())}</h2>\n')
        parts.extend(_operation(method, path, operation) for method, path, operation in operations)
    parts.append("</main>\n</body>\n</html>\n")
    return "".join(parts)


Operation = tuple[str, str, dict[str, Any]]


def grouped(paths: dict[str, Any], tags: list[dict[str, Any]]) -> dict[str, list[Operation]]:
    """The operations by their first tag: the document's tags in its order, then the others
    in the order they first appear; an operation without a tag goes under "other"."""
    groups: dict[str, list[Operation]] = {str(tag["name"]): [] for tag in tags if "name" in tag}
    for path, item in paths.items():
        for method in METHODS:
            operation = item.get(method)
            if operation is not None:
                tag = str((operation.get("tags") or ["other"])[0])
                groups.setdefault(tag, []).append((method, path, operation))
    return {tag: operations for tag, operations in groups.items() if operations}


def _tag_anchor(tag: str) -> str:
    return escape(f"tag-{tag}", quote=True)


def _anchor(method: str, path: str) -> str:
    return escape(f"{method}-{path}", quote=True)


def _contents(groups: dict[str, list[Operation]]) -> str:
    items = []
    for tag, operations in groups.items():
        entries = "".join(
            f'<li><a href="#{_anchor(method, path)}"><code>{escape(method.upper())}'
            f" {escape(path)}</code></a> {inline(operation.get('summary') or '')}</li>\n"
            for method, path, operation in operations
        )
        items.append(
            f'<li><a href="#{_tag_anchor(tag)}">{escape(tag.capitalize())}</a>\n'
            f"<ul>\n{entries}</ul></li>\n"
        )
    return (
        '<nav class="card contents" aria-labelledby="contents">\n'
        f'<h2 id="contents">Contents</h2>\n<ul>\n{"".join(items)}</ul>\n</nav>\n'
    )


def inline(text: str) -> str:
    """One line of Markdown as HTML (code spans, emphasis, links), without a paragraph."""
    html: str = MARKDOWN.renderInline(str(text))
    return html


def block(text: str) -> str:
    """Markdown paragraphs as HTML."""
    html: str = MARKDOWN.render(str(text))
    return html


def _operation(method: str, path: str, operation: dict[str, Any]) -> str:
    parts = [
        f'<section class="card" id="{_anchor(method, path)}">\n'
        f"<h3><code>{escape(method.upper())} {escape(path)}</code></h3>\n"
    ]
    if operation.get("summary"):
        parts.append(f'<p class="summary">{inline(operation["summary"])}</p>\n')
    if operation.get("description"):
        parts.append(block(operation["description"]))
    if operation.get("security"):
        schemes = ", ".join(name for requirement in operation["security"] for name in requirement)
        parts.append(f"<p>Authentication: <code>{escape(schemes)}</code> token.</p>\n")
    parameters = operation.get("parameters") or []
    if parameters:
        rows = "".join(
            f"<tr><td><code>{escape(str(p.get('name')))}</code></td>"
            f"<td>{escape(str(p.get('in')))}</td>"
            f"<td>{type_of(p.get('schema') or {})}</td>"
            f"<td>{'yes' if p.get('required') else 'no'}</td>"
            f"<td>{inline(p.get('description') or '')}</td></tr>\n"
            for p in parameters
        )
        parts.append(
            "<h4>Parameters</h4>\n<table><thead><tr><th>Name</th><th>In</th><th>Type</th>"
            f"<th>Required</th><th>Description</th></tr></thead>\n<tbody>\n{rows}</tbody></table>\n"
        )
    body = operation.get("requestBody")
    if body:
        described = inline(body["description"]) if body.get("description") else ""
        parts.append(f"<h4>Request body</h4>\n{f'<p>{described}</p>' if described else ''}")
        parts.append(_content(body.get("content", {}), "body"))
    answers = operation.get("responses") or {}
    if answers:
        parts.append("<h4>Answers</h4>\n" + _answers(answers))
    parts.append("</section>\n")
    return "".join(parts)


def _answers(answers: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td><strong>{escape(str(status))}</strong></td>"
        f"<td>{inline(answer.get('description') or '')}</td>"
        f"<td>{', '.join(f'<code>{escape(media)}</code>' for media in answer.get('content', {}))}"
        "</td></tr>\n"
        for status, answer in answers.items()
    )
    parts = [
        "<table><thead><tr><th>Status</th><th>When</th><th>Media type</th></tr></thead>\n"
        f"<tbody>\n{rows}</tbody></table>\n"
    ]
    for status, answer in answers.items():
        content = answer.get("content") or {}
        if content:
            parts.append(
                f"<details><summary>{escape(str(status))}: what the answer holds</summary>\n"
                f"{_content(content, 'answer')}</details>\n"
            )
    return "".join(parts)


def _content(content: dict[str, Any], what: str) -> str:
    parts = []
    for media, entry in content.items():
        schema = entry.get("schema") or {}
        parts.append(f"<p><code>{escape(media)}</code>{_schema_title(schema)}</p>\n")
        parts.append(fields_table(schema, what))
        parts.append(_examples(entry.get("examples") or {}))
    return "".join(parts)


def _schema_title(schema: dict[str, Any]) -> str:
    said = [f" <strong>{escape(str(schema['title']))}</strong>"] if schema.get("title") else []
    if schema.get("description"):
        said.append(f": {inline(schema['description'])}")
    return "".join(said)


def fields_table(schema: dict[str, Any], what: str) -> str:
    """The fields of an object schema as a table (name, type, required, description), nested
    objects as dotted names, array elements as ``name[]``; another schema as its type."""
    rows = list(_field_rows(schema, "", 0))
    if not rows:
        return f"<p>The {what} is {type_of(schema)}.</p>\n"
    cells = "".join(
        f"<tr><td><code>{escape(name)}</code></td><td>{kind}</td>"
        f"<td>{'yes' if required else 'no'}</td><td>{described}</td></tr>\n"
        for name, kind, required, described in rows
    )
    return (
        "<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th>"
        f"</tr></thead>\n<tbody>\n{cells}</tbody></table>\n"
    )


def _field_rows(
    schema: dict[str, Any], prefix: str, depth: int
) -> Iterator[tuple[str, str, bool, str]]:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    for name, field in properties.items():
        path = f"{prefix}{name}"
        yield path, type_of(field), name in required, _description(field)
        if depth + 1 < FIELD_DEPTH:
            nested = _object_within(field)
            if nested is not None:
                inner, suffix = nested
                yield from _field_rows(inner, f"{path}{suffix}.", depth + 1)


def _object_within(schema: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The object schema a field holds (itself, or its array's elements), with the suffix its
    fields' names take (``""`` or ``"[]"``); one choice of several is taken when the others
    are null."""
    choices = [
        s for s in schema.get("oneOf") or schema.get("anyOf") or [] if s.get("type") != "null"
    ]
    if len(choices) == 1:
        schema = choices[0]
    if schema.get("properties"):
        return schema, ""
    items = schema.get("items")
    if isinstance(items, dict) and items.get("properties"):
        return items, "[]"
    return None


def _description(schema: dict[str, Any]) -> str:
    said = inline(schema["description"]) if schema.get("description") else ""
    examples = schema.get("examples")
    if examples:
        shown = ", ".join(f"<code>{escape(json.dumps(e))}</code>" for e in examples[:2])
        said += f"{' ' if said else ''}<small>e.g. {shown}</small>"
    return said


def type_of(schema: dict[str, Any]) -> str:
    """A schema's type in words: ``string (date-time)``, ``array of RecordOut``, ``one of
    `a`, `b```, ``integer or null``."""
    choices = schema.get("oneOf") or schema.get("anyOf")
    if choices:
        return " or ".join(dict.fromkeys(type_of(choice) for choice in choices))
    if "const" in schema:
        return f"<code>{escape(json.dumps(schema['const']))}</code>"
    if "enum" in schema:
        return "one of " + ", ".join(
            f"<code>{escape(json.dumps(v))}</code>" for v in schema["enum"]
        )
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(type_of({**schema, "type": each}) for each in kind)
    if kind == "array":
        items = schema.get("items")
        return f"array of {type_of(items)}" if isinstance(items, dict) else "array"
    if kind == "object" and schema.get("title"):
        return escape(str(schema["title"]))
    if kind is None:
        return escape(str(schema.get("title", "any JSON value")))
    text = escape(str(kind))
    if schema.get("format"):
        text += f" ({escape(str(schema['format']))})"
    return text


def resolved(node: Any, schemas: dict[str, Any], inside: tuple[str, ...] = ()) -> Any:
    """``node`` with each ``$ref`` to ``#/components/schemas/<name>`` replaced by that schema
    (itself resolved). A schema met again inside itself is named, not repeated."""
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(SCHEMAS):
            name = reference[len(SCHEMAS) :]
            if name in inside or name not in schemas:
                return {"title": name, "description": f"the schema {name} (recursive)"}
            return resolved({"title": name, **schemas[name]}, schemas, (*inside, name))
        return {key: resolved(value, schemas, inside) for key, value in node.items()}
    if isinstance(node, list):
        return [resolved(item, schemas, inside) for item in node]
    return node


def _examples(examples: dict[str, Any]) -> str:
    """A refusal's problem codes (the keys of its examples, ``web/openapi.py``), or a request
    body's examples, shown whole."""
    if not examples:
        return ""
    if all("code" in (example.get("value") or {}) for example in examples.values()):
        codes = ", ".join(f"<code>{escape(code)}</code>" for code in examples)
        return f"<p>Codes: {codes}</p>\n"
    return "".join(
        f"<p>Example: {escape(name)}</p>\n"
        f"<pre>{escape(json.dumps(example.get('value'), indent=2))}</pre>\n"
        for name, example in examples.items()
    )


def docs_plugins() -> list[OpenAPIRenderPlugin]:
    """The documentation page and the document itself (JSON and YAML)."""
    return [PlainDocsPlugin(), JsonRenderPlugin(), YamlRenderPlugin()]
