"""Asset caching: the HTML is re-checked on every load, the assets it names are cached for good."""

from __future__ import annotations

import re
import shutil

from server.asset_version import IMMUTABLE, tree_hash
from server.routes.pages import ASSET_PREFIX, STATIC_DIR


def test_html_is_no_cache_and_names_only_versioned_assets(client):
    response = client.get("/")
    assert response.headers["cache-control"] == "no-cache"
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', response.text)
    assert assets and all(a.startswith(f"{ASSET_PREFIX}/") for a in assets), assets
    for asset in assets:
        served = client.get(asset)
        assert served.status_code == 200 and served.headers["cache-control"] == IMMUTABLE, asset


def test_modules_imported_by_relative_path_resolve_under_the_prefix(client):
    app_js = client.get(f"{ASSET_PREFIX}/js/app.js")
    vendor = client.get(f"{ASSET_PREFIX}/vendor/codemirror/codemirror.esm.min.js")
    assert app_js.headers["cache-control"] == vendor.headers["cache-control"] == IMMUTABLE
    assert 'from "../vendor/codemirror/codemirror.esm.min.js"' in app_js.text


def test_parts_loaded_on_first_use_are_imported_by_relative_path_and_cached_for_good(client):
    """The diff view, Markdown, Tune and the lesson builder are dynamic imports under the same prefix."""
    imports = {
        "js/diff.js": "../vendor/codemirror/diff.esm.min.js",
        "js/markdown.js": "../vendor/codemirror/markdown.esm.min.js",
        "js/app.js": "./tune.js",
    }
    for module, target in imports.items():
        assert f'import("{target}")' in client.get(f"{ASSET_PREFIX}/{module}").text, module
    for lazy in (
        "vendor/codemirror/diff.esm.min.js",
        "vendor/codemirror/markdown.esm.min.js",
        "js/builder.js",
    ):
        assert client.get(f"{ASSET_PREFIX}/{lazy}").headers["cache-control"] == IMMUTABLE, lazy
    editor = client.get(f"{ASSET_PREFIX}/vendor/codemirror/codemirror.esm.min.js").text
    for chunk in re.findall(r'from"\./(chunk-[\w-]+\.js)"', editor):
        assert client.get(f"{ASSET_PREFIX}/vendor/codemirror/{chunk}").headers["cache-control"] == IMMUTABLE


def test_plain_static_names_stay_revalidated(client):
    assert client.get("/static/js/app.js").headers["cache-control"] == "no-cache"


def test_an_unknown_version_is_not_served(client):
    assert client.get("/static/v/0000000000000000/js/app.js").status_code == 404


def test_the_hash_changes_with_any_file_and_only_then(tmp_path):
    copy = tmp_path / "static"
    shutil.copytree(STATIC_DIR, copy)
    assert tree_hash(copy) == tree_hash(STATIC_DIR) == ASSET_PREFIX.rsplit("/", 1)[1]
    (copy / "js" / "app.js").write_bytes((copy / "js" / "app.js").read_bytes() + b"\n")
    assert tree_hash(copy) != tree_hash(STATIC_DIR)
