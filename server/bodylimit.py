"""Request bodies over the limit are refused as they arrive, never read whole first.

A declared `Content-Length` over the limit is answered 413 before a byte is read; a body without
one (chunked) is counted as it streams and refused the moment it passes the limit. Either way the
server holds at most the limit in memory for one request.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.problems import MEDIA_TYPE


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await _refuse(send, scope, self.limit)
            return
        seen, refused = 0, False

        async def counted() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    # Answer now; the app sees the client gone and whatever it sends is dropped.
                    refused = True
                    await _refuse(send, scope, self.limit)
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counted, guarded)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(send: Send, scope: Scope, limit: int) -> None:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": "Request too large",
        "status": 413,
        "detail": f"the request body is larger than {limit:,} bytes",
        "instance": scope.get("path", ""),
    }
    data = json.dumps(body, ensure_ascii=True).encode()
    headers = [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(data)).encode())]
    await send(
        {"type": "http.response.start", "status": 413, "headers": [*headers, (b"connection", b"close")]}
    )
    await send({"type": "http.response.body", "body": data})
