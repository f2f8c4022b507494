"""``Connection: close`` on an answer given before the request's body was read.

Many refusals come before the body is needed: a missing bearer token (401), a body announced
over the route's limit (413), a passkey ceremony from an origin that is not configured (400),
a route that does not exist (404). The HTTP server then cannot reuse the connection unless
the rest of the body has already arrived, and it closes it once the answer is sent. Without a
word in the answer, a client that sends its next request on that connection before it sees
the close gets no answer at all ("server disconnected"), and for a ``POST`` it cannot tell
whether the request was taken. RFC 9112, section 9.6: a server that closes the connection
after its answer should say so with ``Connection: close``. This middleware says so whenever
the request announced a body (``Content-Length`` above zero, or ``Transfer-Encoding``) and the
application answers before it has received the body's last part; the client then opens a new
connection for its next request. Answers given after the whole body was read keep the
connection.
"""

from __future__ import annotations

from collections.abc import Iterable

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, ReceiveMessage, Scope, Send

_CLOSE = (b"connection", b"close")


class CloseUnreadBodies:
    """ASGI middleware (module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or not announces_body(scope["headers"]):
            await self.app(scope, receive, send)
            return
        read = False

        async def watched_receive() -> ReceiveMessage:
            nonlocal read
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                read = True  # the last part, or the client has gone
            return message

        async def closing_send(message: Message) -> None:
            if message["type"] == "http.response.start" and not read:
                headers = [*message.get("headers", ()), _CLOSE]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, watched_receive, closing_send)


def announces_body(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """True when the request's headers announce a body: a ``Content-Length`` other than zero
    (a malformed one included: the server refuses it before the application sees it), or a
    ``Transfer-Encoding``."""
    for name, value in headers:
        if name == b"content-length":
            return bool(value.strip() != b"0")
        if name == b"transfer-encoding":
            return True
    return False
