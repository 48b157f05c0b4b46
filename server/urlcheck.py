"""A URL that holds a NUL character (`%00` in its path or query) is refused before any route sees it.

No page, id, code or parameter of this server contains one, and PostgreSQL cannot hold one in a text
value: an id with `%00` in it, looked up there, failed the statement (a 500 "internal error") where
SQLite simply found nothing. Refusing it here answers every route alike, on either database.
"""

from __future__ import annotations

import json
from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Receive, Scope, Send

from server.problems import MEDIA_TYPE


class RefuseNul:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and holds_nul(scope):
            await _refuse(send, scope)
            return
        await self.app(scope, receive, send)


def holds_nul(scope: Scope) -> bool:
    """Whether the request's path or query string, percent-decoded, holds a NUL character."""
    query: bytes = scope.get("query_string", b"")
    return "\x00" in scope.get("path", "") or b"\x00" in unquote_to_bytes(query)


async def _refuse(send: Send, scope: Scope) -> None:
    body = {
        "type": "about:blank",
        "title": "Bad request",
        "status": 400,
        "detail": "a link cannot contain a NUL character (%00); check the link",
        "instance": scope.get("path", "").replace("\x00", "\ufffd"),
    }
    data = json.dumps(body, ensure_ascii=True).encode()
    headers = [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": data})
