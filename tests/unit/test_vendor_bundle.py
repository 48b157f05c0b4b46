"""The committed editor bundle matches what frontend/ would build (checked without Node).

`frontend/build.mjs` records what it bundled (package versions, esbuild, each source file's sha256) in
`versions.json` and in every bundle file's banner. A dependency bump in package-lock.json, or an edit
of a file of src/, without `npm ci && npm run build` makes these tests fail.
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


def bundle_files() -> list[Path]:
    return sorted(VENDOR.glob("*.js"))


def banner(path: Path) -> str:
    text = path.read_text()
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


def test_banners_name_every_bundled_package_with_its_licence():
    listed = [
        found
        for path in bundle_files()
        for found in re.findall(r"^ \* (@?[\w./-]+)@(\d[\w.-]*) (\S.*)$", banner(path), re.MULTILINE)
    ]
    assert {name: version for name, version, _ in listed} == versions()["packages"]
    assert all(licence for _, _, licence in listed)
    licences = (VENDOR / "LICENSES.txt").read_text()
    for name, version in versions()["packages"].items():
        assert f"{name}@{version} (" in licences, name


def test_bundle_was_built_from_the_current_sources():
    sources = {
        f"src/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((FRONTEND / "src").glob("*.js"))
    }
    assert versions()["sources"] == sources, (
        "a file of src/ changed: run `cd frontend && npm ci && npm run build`"
    )
    for path in bundle_files():
        for name, sha in sources.items():
            assert f"source frontend/{name} sha256 {sha}" in banner(path), path.name


def test_the_editor_loads_without_the_diff_view_or_markdown():
    """The page's first load imports the editor's entry and the chunks it names; the merge view and
    Markdown are entries of their own, imported on first use (their packages are not in those files)."""
    editor = (VENDOR / "codemirror.esm.min.js").read_text()
    chunks = set(re.findall(r'from"\./(chunk-[\w-]+\.js)"', editor))
    assert chunks, "the editor imports no shared chunk"
    first_load = "".join(banner(VENDOR / name) for name in ["codemirror.esm.min.js", *sorted(chunks)])
    for package in ("@codemirror/merge", "markdown-it", "dompurify"):
        assert f" * {package}@" not in first_load, package
    assert " * @codemirror/view@" in first_load
