"""`/docs` (Swagger UI) and `/redoc` (ReDoc) with no network beyond this server.

FastAPI's own pages load their scripts, style and icon from a CDN, so on an offline TPU VM or in a
classroom without internet they are blank. Here they come from `/docs-assets/`: the copies of
swagger-ui-dist (Apache-2.0) and redoc (MIT) that the pinned `fastapi-offline` package (MIT,
pyproject.toml) ships; bumping that pin is how they are updated. The app is built with
`docs_url=None, redoc_url=None` so these are the only ones.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_DIR = Path(str(files("fastapi_offline") / "static"))
ASSETS = "/docs-assets"

router = APIRouter(include_in_schema=False)
router.mount(ASSETS, StaticFiles(directory=ASSETS_DIR), name="docs-assets")


def _base(request: Request) -> str:
    """The root path the app is served under (behind a proxy that strips a prefix), or ''."""
    return str(request.scope.get("root_path", ""))


@router.get("/docs", response_class=HTMLResponse)
def swagger_ui(request: Request) -> HTMLResponse:
    base = _base(request)
    return get_swagger_ui_html(
        openapi_url=f"{base}{request.app.openapi_url}",
        title=f"{request.app.title} - Swagger UI",
        swagger_js_url=f"{base}{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{base}{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{base}{ASSETS}/favicon.png",
    )


@router.get("/redoc", response_class=HTMLResponse)
def redoc(request: Request) -> HTMLResponse:
    base = _base(request)
    return get_redoc_html(
        openapi_url=f"{base}{request.app.openapi_url}",
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{base}{ASSETS}/redoc.standalone.js",
        redoc_favicon_url=f"{base}{ASSETS}/favicon.png",
        with_google_fonts=False,  # fonts.googleapis.com is a network request too
    )
