"""The page's ES modules, checked on their source (no browser, no Node): one module talks to the
server, the chips come from the server, modules stay small and import each other without cycles."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from server.wire.schemas import ChipName, RunRequest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "frontend" / "static" / "js"
MODULES = sorted(JS.glob("*.js"))
IMPORT = re.compile(r'^import\s[^;]*?\sfrom\s"(\.{1,2}/[^"]+)";', re.MULTILINE)
MAX_LINES = 350


def local_imports(module: Path) -> list[Path]:
    return [(module.parent / target).resolve() for target in IMPORT.findall(module.read_text())]


def test_the_page_has_modules():
    assert {"app.js", "embed.js", "api.js", "run.js", "notices.js"} <= {m.name for m in MODULES}


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.name)
def test_only_api_js_talks_to_the_server(module):
    if module.name == "api.js":
        return
    assert not re.search(r"\bfetch\(|\bEventSource\b|XMLHttpRequest|sendBeacon", module.read_text())


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.name)
def test_no_module_spells_out_the_chips(module):
    # The page builds its chip buttons from /api/chips; one name (a default) is not a list.
    named = [chip for chip in typing.get_args(ChipName) if f'"{chip}"' in module.read_text()]
    assert len(named) <= 1, named


def test_the_default_chip_is_the_servers():
    default = re.search(r'const DEFAULT_CHIP = "(\w+)";', (JS / "toolbar.js").read_text())
    assert default and default.group(1) == RunRequest.model_fields["chip"].default


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.name)
def test_module_is_small(module):
    assert len(module.read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.name)
def test_imports_resolve(module):
    missing = [str(p.relative_to(ROOT)) for p in local_imports(module) if not p.is_file()]
    assert not missing


def test_modules_import_each_other_without_cycles():
    graph = {m.resolve(): [p for p in local_imports(m) if p.parent == JS.resolve()] for m in MODULES}
    done: set[Path] = set()

    def visit(module: Path, path: tuple[Path, ...]) -> None:
        if module in path:
            cycle = [p.name for p in (*path[path.index(module) :], module)]
            pytest.fail(f"import cycle: {' -> '.join(cycle)}")
        if module in done:
            return
        for imported in graph.get(module, []):
            visit(imported, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def call_arguments(source: str, start: int) -> str:
    """The text of a call's arguments from just after its "(", with nested brackets blanked out."""
    depth, out = 1, []
    for char in source[start:]:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0:
            break
        out.append(char if depth == 1 else " ")
    return "".join(out)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.name)
def test_replace_children_never_gets_a_bare_null(module):
    # The DOM's own replaceChildren turns null into the text "null" (seen as "nullForget these runs");
    # dom.js fill() drops null, so a conditional child goes through fill.
    source = module.read_text()
    calls = [call_arguments(source, m.end()) for m in re.finditer(r"\.replaceChildren\(", source)]
    assert not [args for args in calls if re.search(r":\s*null\b", args)]
