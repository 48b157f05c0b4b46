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
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


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
        errors = [_error(e) for e in exc.errors()]
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
        return problem_response(
            exc.status_code,
            title,
            str(exc.detail),
            instance=request.url.path,
            headers=getattr(exc, "headers", None),
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


def _error(e: dict[str, Any]) -> dict[str, str]:
    loc = [str(p) for p in e.get("loc", ()) if p != "body"]
    return {"field": ".".join(loc), "message": str(e.get("msg", "")), "type": str(e.get("type", ""))}
