"""`/mcp`: the MCP server over streamable HTTP (the official SDK's low-level server and its session
manager), one per app lifespan.

The low-level server is used rather than the SDK's decorator layer so that a tool's input schema is
exactly the API's wire type (`RunRequest`'s JSON schema, not a wrapper object) and its arguments are
validated by that type as the API validates a body. Every call first takes a token from the MCP
rate bucket of the caller's address (429 as a tool error, with `retry_after`); what the tool then
does counts against the address as the API's calls do (the run queue's limits, the store quotas).
A refusal is a tool result with `isError` and the problem (RFC 9457 fields) as structured content,
so an agent reads the same title, status and detail as an API client; our own faults say only that.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from fastapi import FastAPI
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from server import deps
from server.mcp.tools import TOOLS, Call, ToolSpec
from server.problems import ProblemError, field_error, problem_response
from server.ratelimit import RateLimiter
from server.settings import Settings

log = logging.getLogger(__name__)
NAME = "pallas-playground"
SESSION_IDLE_SECONDS = 10 * 60  # a session nobody used for this long is closed (the SDK's default: 30 min)
INSTRUCTIONS = (
    "Run, check, lower, time and tune JAX Pallas TPU kernels in a sandbox. Start with list_catalog and "
    "read_catalog_entry, write the kernel, then run_kernel with the entry's slug; a failed run's "
    "`error`, `cases` and `next_step` say why. Without a TPU, kernels run in TPU interpret mode on a "
    "CPU: wall times are the simulator's; `estimate` is the TPU time model's estimate."
)


def install(app: FastAPI, settings: Settings) -> None:
    """Serve `/mcp` on `app` (unless `PLAYGROUND_MCP` is off); `serving` runs it within the lifespan."""
    if settings.mcp:
        app.router.routes.append(Route("/mcp", Endpoint(app), methods=["GET", "POST", "DELETE"]))


@contextlib.asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[None]:
    """The MCP sessions of this lifespan (a new server and session manager each time the app starts)."""
    settings: Settings = app.state.settings
    if not settings.mcp:
        yield
        return
    calls = RateLimiter(settings.mcp_calls_per_minute, settings.mcp_calls_burst)
    manager = StreamableHTTPSessionManager(
        app=_server(calls),
        security_settings=_security(settings),
        max_request_body_size=settings.body_bytes,
        session_idle_timeout=SESSION_IDLE_SECONDS,
    )
    async with manager.run():
        # New sessions have a bucket of their own, as large as the calls' (the SDK holds up to 10,000
        # sessions: without it one address could take them all).
        app.state.mcp = Serving(manager, RateLimiter(settings.mcp_calls_per_minute, settings.mcp_calls_burst))
        try:
            yield
        finally:
            app.state.mcp = None


@dataclass(frozen=True)
class Serving:
    sessions: StreamableHTTPSessionManager
    new_sessions: RateLimiter


class Endpoint:
    """The `/mcp` route: hands each request to the running session manager."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        serving: Serving | None = getattr(self.app.state, "mcp", None)
        refusal = _refusal(serving, Request(scope))
        if refusal is not None or serving is None:
            response = refusal or problem_response(
                503, "Not started", "the MCP server is starting or stopping"
            )
            await response(scope, receive, send)
            return
        manager = serving.sessions
        began = False

        async def sending(message: Message) -> None:
            nonlocal began
            began = began or message["type"] == "http.response.start"
            await send(message)

        try:
            await manager.handle_request(scope, receive, sending)
        except Exception:
            if not began:
                raise
            # E.g. a client that cancelled a call and closed its session while the SDK still wrote
            # to it: the response has begun, so the app's error page could only fail in turn.
            log.warning("an MCP request failed after its response began", exc_info=True)


def _refusal(serving: Serving | None, request: Request) -> Response | None:
    """429 for a request that opens a session (a POST without `Mcp-Session-Id`, or a sessionless
    one) from an address past its bucket of new sessions."""
    if serving is None or request.method != "POST" or request.headers.get("mcp-session-id"):
        return None
    wait = serving.new_sessions.take(deps.client_of(request).address)
    if not wait:
        return None
    detail = f"this address opened MCP sessions too quickly; try again in {round(wait)} s"
    return problem_response(429, "Too many MCP sessions", detail, headers={"Retry-After": str(round(wait))})


def _security(settings: Settings) -> TransportSecuritySettings | None:
    """DNS-rebinding protection while the server listens on loopback only, as the SDK does; behind a
    reverse proxy (`PLAYGROUND_TRUSTED_PROXIES`) the Host header is the proxy's public name."""
    loopback = settings.host in ("127.0.0.1", "localhost", "::1")
    if not loopback or settings.trusted_proxies:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _server(limiter: RateLimiter) -> Server[Any]:
    specs = {spec.name: spec for spec in TOOLS}
    listed = types.ListToolsResult(tools=[_tool(spec) for spec in TOOLS])  # the schemas, made once

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = specs.get(params.name)
        if spec is None:
            known = ", ".join(specs)
            return _refused(ProblemError(404, "Unknown tool", f"no tool {params.name!r}; known: {known}"))
        request: Request = ctx.request

        async def progress(done: float, total: float | None, message: str) -> None:
            await ctx.session.report_progress(done, total, message)

        try:
            _admit(limiter, request)
            body = _arguments(spec, params.arguments or {})
            output = await spec.handler(Call(request, progress), body)
        except ProblemError as problem:
            return _refused(problem)
        except Exception:
            log.exception("MCP tool %s failed", spec.name)
            return _refused(
                ProblemError(500, "Internal server error", "the server failed; this is our fault, not yours")
            )
        content = [types.TextContent(type="text", text=output.text)]
        return types.CallToolResult(content=content, structured_content=output.structured)

    return Server(
        NAME, version="0.1.0", instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool
    )


def _tool(spec: ToolSpec) -> types.Tool:
    hints = types.ToolAnnotations(
        read_only_hint=spec.read_only, destructive_hint=False, open_world_hint=False
    )
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input.model_json_schema(),
        annotations=hints,
    )


def _admit(limiter: RateLimiter, request: Request) -> None:
    """A token of the caller's address's MCP bucket, or 429 with the seconds to wait."""
    wait = limiter.take(deps.client_of(request).address)
    if wait:
        raise ProblemError(
            429,
            "Too many MCP calls",
            f"this address made MCP calls too quickly; try again in {round(wait)} s",
            retry_after=round(wait),
        )


def _arguments(spec: ToolSpec, arguments: dict[str, Any]) -> Any:
    """The arguments as the tool's wire type, validated as the API validates a JSON body (422 if not)."""
    try:
        return spec.input.model_validate_json(json.dumps(arguments))
    except ValidationError as exc:
        errors = [field_error(dict(e)) for e in exc.errors()]
        first = errors[0]
        detail = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
        raise ProblemError(422, "Invalid request", detail, errors=errors) from exc


def _refused(problem: ProblemError) -> types.CallToolResult:
    body = {"type": "about:blank", "title": problem.title, "status": problem.status, "detail": problem.detail}
    body |= problem.extensions
    if "Retry-After" in problem.headers:
        body.setdefault("retry_after", int(problem.headers["Retry-After"]))
    text = f"{problem.status} {problem.title}: {problem.detail}"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=body, is_error=True
    )
