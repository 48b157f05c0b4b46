"""The browser page: `/` (the playground), `/s/{id}` (the same page reopening a share), `/static/...`.

The page is static files only (no build step at install or run). Every HTML response carries a
Content-Security-Policy that allows scripts from this origin alone, a second line of defence behind
the page's rule of rendering every user-produced string as text.
"""

from __future__ import annotations

import os
from os import PathLike
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from server.routes.shares import StoreDep

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        # CodeMirror injects its own <style> elements.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


class RevalidatedStaticFiles(StaticFiles):
    """Static files the browser re-checks (by ETag) on every load, so an upgrade is never half-seen."""

    def file_response(
        self,
        full_path: str | PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


router = APIRouter(include_in_schema=False)
router.mount("/static", RevalidatedStaticFiles(directory=STATIC_DIR), name="static")


def page(status_code: int = 200) -> HTMLResponse:
    html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    return HTMLResponse(html, status_code=status_code, headers=PAGE_HEADERS)


@router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
def index_page() -> HTMLResponse:
    return page()


@router.api_route("/s/{share_id}", methods=["GET", "HEAD"], response_class=HTMLResponse)
def share_page(share_id: str, store: StoreDep) -> HTMLResponse:
    # An unknown id still gets the page (it explains what happened), but with an honest 404.
    return page(200 if store.get(share_id) else 404)
