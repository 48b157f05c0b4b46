"""Content-hashed asset URLs: `/static/v/<hash>/...` is cached for a year, the HTML is `no-cache`.

The hash covers every file under `frontend/static/` (names and bytes), computed once when the
server starts, so the committed files stay what the vendor build wrote (no renaming step, the
build stays byte-for-byte reproducible). The pages' HTML is served with its `/static/` references
rewritten to the versioned prefix; the ES modules import each other by relative path, so they
resolve inside the same prefix and every module is fetched under one immutable name. A repeat
load therefore revalidates the HTML alone; any change to any file changes the prefix.
The plain `/static/...` names stay served `no-cache` (tests and old links use them).
"""

from __future__ import annotations

import hashlib
import os
from os import PathLike
from pathlib import Path

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

IMMUTABLE = "public, max-age=31536000, immutable"


def tree_hash(root: Path) -> str:
    """A short digest of every file's relative path and bytes under `root`, in a stable order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def versioned_html(html: str, prefix: str) -> str:
    """The page with its `/static/` asset references pointed at the versioned prefix."""
    return html.replace('"/static/', f'"{prefix}/')


class _StaticFiles(StaticFiles):
    """Static files with one caching rule and no content sniffing."""

    cache_control = "no-cache"

    def file_response(
        self,
        full_path: str | PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = self.cache_control
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


class ImmutableStaticFiles(_StaticFiles):
    """Files under a content-hashed prefix: the name changes with the bytes, so never re-checked."""

    cache_control = IMMUTABLE


class RevalidatedStaticFiles(_StaticFiles):
    """Static files the browser re-checks (by ETag) on every load, so an upgrade is never half-seen."""

    cache_control = "no-cache"
