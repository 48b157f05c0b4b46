"""The committed editor bundle matches what frontend/ would build (checked without Node).

`frontend/build.mjs` records what it bundled (package versions, esbuild, the entry file's sha256) in
`versions.json` and in the bundle's banner. A dependency bump in package-lock.json, or an edit of
src/editor.js, without `npm ci && npm run build` makes these tests fail.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
VENDOR = FRONTEND / "static" / "vendor" / "codemirror"


def versions() -> dict:
    return json.loads((VENDOR / "versions.json").read_text())


def banner() -> str:
    text = (VENDOR / "codemirror.esm.min.js").read_text()
    return text[: text.index("*/") + 2]


def test_bundled_versions_are_the_lockfile_versions():
    lock = json.loads((FRONTEND / "package-lock.json").read_text())["packages"]
    bundled = versions()["packages"]
    assert bundled, "versions.json lists no packages"
    for name, version in bundled.items():
        assert lock[f"node_modules/{name}"]["version"] == version, name
    assert lock["node_modules/esbuild"]["version"] == versions()["esbuild"]


def test_direct_dependencies_are_pinned_and_bundled():
    declared = json.loads((FRONTEND / "package.json").read_text())["devDependencies"]
    for name, version in declared.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned exactly: {version}"
        if name != "esbuild":
            assert versions()["packages"][name] == version, name


def test_banner_names_every_bundled_package_with_its_licence():
    listed = re.findall(r"^ \* (@?[\w./-]+)@(\d[\w.-]*) (\S.*)$", banner(), re.MULTILINE)
    assert {name: version for name, version, _ in listed} == versions()["packages"]
    assert all(licence for _, _, licence in listed)
    licences = (VENDOR / "LICENSES.txt").read_text()
    for name, version in versions()["packages"].items():
        assert f"{name}@{version} (" in licences, name


def test_bundle_was_built_from_the_current_editor_source():
    source = hashlib.sha256((FRONTEND / "src" / "editor.js").read_bytes()).hexdigest()
    assert versions()["entry_sha256"] == source, (
        "src/editor.js changed: run `cd frontend && npm ci && npm run build`"
    )
    assert f"entry frontend/src/editor.js sha256 {source}" in banner()
