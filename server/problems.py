"""RFC 9457 problem details: the one shape of every HTTP error this server returns.

Request faults are 4xx with a precise `detail`; our own faults are 500 with no internals leaked.
A user's kernel failing is never an HTTP error: it is a RunResult with a status (see runs routes).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

MEDIA_TYPE = "application/problem+json"
log = logging.getLogger(__name__)


class ProblemError(Exception):
    def __init__(
        self,
        status: int,
        title: str,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail
        self.headers = headers or {}
        self.extensions = extensions


class Problem(BaseModel):
    """The body of every error response (RFC 9457), for the OpenAPI document."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str | None = None


_MEANINGS = {
    400: "Malformed request (e.g. the body is not JSON)",
    401: "No credentials: a class's teacher token is missing (send `Authorization: Bearer`)",
    403: "Not allowed: a lesson's edit token, or a class's teacher or student token, is wrong",
    404: "No such resource",
    405: "Method not allowed",
    409: "Not ready yet (e.g. a run that has not finished)",
    413: "Request or source too large",
    422: "Invalid request",
    429: "Too many runs, or saves of shares and lessons, from this client or address (see Retry-After)",
    500: "A fault of the server",
    503: "The queue is full (see Retry-After)",
    507: "No room to store more shares and lessons",
}


def problem_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error statuses, each an `application/problem+json` Problem."""
    return {
        code: {
            "model": Problem,  # registers the schema; the body is sent as problem+json
            "description": _MEANINGS[code],
            "content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for code in (*codes, 500)
    }


def problem_response(
    status: int,
    title: str,
    detail: str,
    *,
    instance: str = "",
    headers: dict[str, str] | None = None,
    **extensions: Any,
) -> JSONResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extensions}
    if instance:
        body["instance"] = instance
    return JSONResponse(_unicode(body), status_code=status, media_type=MEDIA_TYPE, headers=headers)


def _unicode(value: Any) -> Any:
    """Strings that can be sent as UTF-8 (a request may have carried lone surrogates into a message)."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_unicode(k): _unicode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unicode(v) for v in value]
    return value


def install(app: FastAPI) -> None:
    @app.exception_handler(ProblemError)
    async def on_problem(request: Request, exc: ProblemError) -> JSONResponse:
        return problem_response(
            exc.status,
            exc.title,
            exc.detail,
            instance=request.url.path,
            headers=exc.headers,
            **exc.extensions,
        )

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [field_error(e) for e in exc.errors()]
        if any(e["type"] == "json_invalid" for e in errors):
            return problem_response(
                400,
                "Malformed JSON",
                "the request body is not valid JSON",
                instance=request.url.path,
                errors=errors,
            )
        first = errors[0] if errors else {"field": "", "message": "invalid request"}
        detail = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
        return problem_response(422, "Invalid request", detail, instance=request.url.path, errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "HTTP error")
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            # Starlette names only the first route's methods; a path may have several routes.
            headers["Allow"] = ", ".join(_allowed_methods(request))
        return problem_response(
            exc.status_code, title, str(exc.detail), instance=request.url.path, headers=headers
        )

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s", request.url.path)
        return problem_response(
            500,
            "Internal server error",
            "the server failed; this is our fault, not yours",
            instance=request.url.path,
        )


def _allowed_methods(request: Request) -> list[str]:
    methods: set[str] = set()
    for route in request.app.router.routes:
        pattern, allowed = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if pattern is not None and allowed and pattern.match(request.url.path):
            methods |= set(allowed)
    return sorted(methods)


def field_error(e: dict[str, Any]) -> dict[str, str]:
    """One validation error as a problem lists it: the field (dotted, without `body`), the message, the type."""
    loc = [str(p) for p in e.get("loc", ()) if p != "body"]
    return {"field": ".".join(loc), "message": str(e.get("msg", "")), "type": str(e.get("type", ""))}
