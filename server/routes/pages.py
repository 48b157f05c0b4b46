"""The browser pages: `/` (the playground), `/s/{id}` and `/l/{id}` (the same page reopening a share
or a lesson), `/embed/{id}` and `/embed/l/{id}` (a compact runnable share or lesson for other sites'
frames), `/static/...`.

The pages are static files only (no build step at install or run): the repository's
`frontend/static/`, which lives with the rest of the front end rather than in the Python package,
so it is found from the repository root (the Dockerfile copies it beside `server/`). Every HTML
response carries a Content-Security-Policy that allows scripts from this origin alone, a second
line of defence behind the pages' rule of rendering every user-produced string as text. The
playground itself is never framed (`frame-ancestors 'none'`, `X-Frame-Options: DENY`: no
clickjacking of its buttons); an embed may be framed by the sites `PLAYGROUND_EMBED_ORIGINS` names
(X-Frame-Options cannot express a list, so embeds leave it out and rely on CSP).
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from server.asset_version import ImmutableStaticFiles, RevalidatedStaticFiles, tree_hash, versioned_html
from server.deps import ClassesDep, ClassroomDep, ClientDep, LessonsDep, SettingsDep, SharesDep
from server.settings import Settings

STATIC_DIR = Path(__file__).resolve().parents[2] / "frontend" / "static"
COMMON_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def csp(frame_ancestors: str) -> str:
    """The pages' Content-Security-Policy; `frame_ancestors`: who may show the page in a frame."""
    return "; ".join(
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
            f"frame-ancestors {frame_ancestors}",
        )
    )


PAGE_HEADERS = {**COMMON_HEADERS, "Content-Security-Policy": csp("'none'"), "X-Frame-Options": "DENY"}


ASSET_PREFIX = f"/static/v/{tree_hash(STATIC_DIR)}"

router = APIRouter(include_in_schema=False)
# The versioned mount first: "/static" would otherwise take its requests.
router.mount(ASSET_PREFIX, ImmutableStaticFiles(directory=STATIC_DIR), name="static-versioned")
router.mount("/static", RevalidatedStaticFiles(directory=STATIC_DIR), name="static")


def page(
    status_code: int = 200, *, name: str = "index.html", headers: dict[str, str] = PAGE_HEADERS
) -> HTMLResponse:
    html = versioned_html((STATIC_DIR / name).read_text(encoding="utf-8"), ASSET_PREFIX)
    return HTMLResponse(html, status_code=status_code, headers=headers)


@router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
def index_page() -> HTMLResponse:
    return page()


@router.api_route("/s/{share_id}", methods=["GET", "HEAD"], response_class=HTMLResponse)
def share_page(share_id: str, shares: SharesDep) -> HTMLResponse:
    # An unknown id still gets the page (it explains what happened), but with an honest 404.
    return page(200 if shares.get(share_id) else 404)


@router.api_route("/l/{lesson_id}", methods=["GET", "HEAD"], response_class=HTMLResponse)
def lesson_page(lesson_id: str, lessons: LessonsDep) -> HTMLResponse:
    return page(200 if lessons.get(lesson_id) else 404)


@router.api_route("/c/{code}", methods=["GET", "HEAD"], response_class=HTMLResponse)
async def class_join_page(
    code: str, classes: ClassesDep, room: ClassroomDep, client: ClientDep, settings: SettingsDep
) -> HTMLResponse:
    """200 or 404 tells whether a join code exists: GET and HEAD alike count against the address's
    join budget, so codes cannot be enumerated through the page faster than through joins."""
    wait = await room.live.admit_join(client.address, settings.class_joins_per_minute, what="lookup")
    if wait:
        retry = str(math.ceil(wait))
        return page(429, name="class.html", headers={**PAGE_HEADERS, "Retry-After": retry})
    found = await asyncio.to_thread(classes.by_code, code)
    return page(200 if found else 404, name="class.html")


@router.api_route("/t/{class_id}", methods=["GET", "HEAD"], response_class=HTMLResponse)
def class_teacher_page(class_id: str, classes: ClassesDep) -> HTMLResponse:
    # The teacher token is in the fragment (no server sees it); the page asks with it.
    return page(200 if classes.get(class_id) else 404, name="class.html")


def embed_headers(settings: Settings) -> dict[str, str]:
    return {**COMMON_HEADERS, "Content-Security-Policy": csp(settings.embed_origins)}


@router.api_route("/embed/{share_id}", methods=["GET", "HEAD"], response_class=HTMLResponse)
def embed_page(share_id: str, shares: SharesDep, settings: SettingsDep) -> HTMLResponse:
    return page(200 if shares.get(share_id) else 404, name="embed.html", headers=embed_headers(settings))


@router.api_route("/embed/l/{lesson_id}", methods=["GET", "HEAD"], response_class=HTMLResponse)
def embed_lesson_page(lesson_id: str, lessons: LessonsDep, settings: SettingsDep) -> HTMLResponse:
    found = lessons.get(lesson_id) is not None
    return page(200 if found else 404, name="embed.html", headers=embed_headers(settings))
