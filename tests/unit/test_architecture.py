"""The layers, checked on the source: what each folder may import, no import cycles, JAX only where jobs
run and JAX's internals only in its adapter, one module that classifies results, few loose modules,
and one list of event kinds.

Over 400 lines as one file: every layer rule (sandbox, server, JAX adapter) is checked over the
same parsed import graph, built once here; split, each part would parse the tree again.

Folders say which process code runs in (see `sandbox/__init__.py`), so the rules are a table of
layer → layers it may import. Every import counts, including the lazy ones inside functions: a
cycle through a lazy import is still a design error, only one that fails later.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from sandbox.backends.execute import FORWARDED, forwarded
from sandbox.protocol import (
    FORWARDED_KINDS,
    QUEUE_KINDS,
    RUN_STREAM_KINDS,
    SWEEP_STREAM_KINDS,
    EventKind,
)

ROOT = Path(__file__).resolve().parents[2]
KERNEL_IMPORTS = {"jax", "numpy", "ml_dtypes"}
JAX = {"jax", "jaxlib", "libtpu"}

# The web server's layers, bottom to top: each imports only layers below it, so its folders cannot
# form a ring again (wire → store → convert → wire did, and submit reached into classroom/).
CORE = {"protocol", "domain", "server.base", "server.wire", "server.domain"}
SERVER_ALLOWED: dict[str, set[str]] = {
    # Settings, who the caller is, the one error shape, token buckets, static-file versions.
    "server.base": {"protocol", "domain", "server.base"},
    # The HTTP JSON types (pydantic) and the limits they check: nothing of the server below them.
    "server.wire": {"protocol", "server.wire"},
    # Wire ↔ sandbox conversions, the versions this server runs, the runtime a request names.
    "server.domain": {"protocol", "domain", "server.base", "server.wire", "server.domain"},
    # The run queue (in this process, or Redis) and its result cache; the store's peer, not its user.
    "server.queue": CORE | {"backends", "queue", "server.queue"},
    # Shares, lessons, classes, measurements: SQLite or PostgreSQL.
    "server.store": CORE | {"server.store"},
    # From a request to queued runs: the checks every run gets, sweeps of shard runs.
    "server.runs": CORE | {"server.queue", "server.runs"},
    # Class sessions: the grid, the live room, what makes a run a class run (an admission for runs).
    "server.classroom": CORE
    | {"backends", "server.queue", "server.store", "server.runs", "server.classroom"},
    # Notebooks: exported from a run, measurements taken back in.
    "server.notebook": CORE | {"server.store", "server.notebook"},
    # The app's state as FastAPI dependencies.
    "server.deps": CORE | {"server.queue", "server.store", "server.runs", "server.classroom", "server.deps"},
    # The HTTP routes (one module per resource; they never import each other) and the MCP endpoint.
    "server.routes": CORE
    | {"server.queue", "server.store", "server.runs", "server.classroom", "server.notebook", "server.deps"}
    | {"server.routes"},
    "server.mcp": CORE | {"server.queue", "server.runs", "server.classroom", "server.deps", "server.mcp"},
    # The app factory, its middleware and `python -m server`: wires up everything.
    "server.app": {"protocol", "domain", "backends", "server.app"},
}
SERVER_ALLOWED["server.app"] |= set(SERVER_ALLOWED)
# `server.<name>` (a module or a sub-package) → its layer.
SERVER_LAYERS = {
    **dict.fromkeys(
        ("settings", "clients", "problems", "ratelimit", "streams", "asset_version"), "server.base"
    ),
    "wire": "server.wire",
    **dict.fromkeys(("convert", "versions", "runtimes"), "server.domain"),
    "queue": "server.queue",
    "store": "server.store",
    **dict.fromkeys(("submit", "sweeps"), "server.runs"),
    "classroom": "server.classroom",
    "notebook": "server.notebook",
    "deps": "server.deps",
    "routes": "server.routes",
    "mcp": "server.mcp",
    **dict.fromkeys(("", "app", "bodylimit", "urlcheck", "__main__"), "server.app"),
}

# Layer → the layers its modules may import.
ALLOWED: dict[str, set[str]] = {
    "protocol": {"protocol"},
    "domain": {"protocol", "domain"},
    "backends": {"protocol", "domain", "backends", "jail", "verdict"},
    "jail": {"protocol", "domain", "jail", "harness"},
    "harness": {"protocol", "harness", "verdict"},
    # The checker: pure numpy, shared by the job child (encoding) and the host side (judging).
    "verdict": {"protocol", "verdict"},
    "cli": {"protocol", "domain", "backends", "client"},
    # The Python client (`pallas_playground`): HTTP and the protocol's result types, nothing else.
    "client": {"protocol", "client"},
    # The Redis queue, shared by the web servers and the workers: host side, no backends.
    "queue": {"protocol", "domain", "queue"},
    # A runner worker: a host-side process like the job-runner service, fed by the queue.
    "worker": {"protocol", "domain", "backends", "queue", "worker"},
    **SERVER_ALLOWED,
}
# Where JAX may be imported: the job child and the pool that forks it.
JAX_LAYERS = {"harness", "jail"}


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "pallas_playground":
        return "client"
    if parts[0] == "server":
        return SERVER_LAYERS[parts[1] if len(parts) > 1 else ""]
    if len(parts) > 1 and parts[1] in (
        "protocol",
        "backends",
        "jail",
        "harness",
        "queue",
        "worker",
        "verdict",
    ):
        return parts[1]
    return "cli" if module == "sandbox.__main__" else "domain"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources(root: Path, packages: Iterable[str]) -> dict[str, str]:
    return {
        module_name(p, root): p.read_text()
        for package in packages
        for p in sorted((root / package).rglob("*.py"))
    }


def imported(source: str, module: str, is_package: bool) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names) for every import statement, relative ones made absolute."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, tuple(a.name for a in node.names)))
    return found


def graph(modules: Mapping[str, str], packages: set[str] = frozenset()) -> dict[str, set[str]]:
    """Module → the known modules it imports (`from pkg import sub` counts as an import of pkg.sub)."""
    edges: dict[str, set[str]] = {}
    for module, source in modules.items():
        targets = set()
        for name, names in imported(source, module, module in packages):
            subs = {f"{name}.{n}" for n in names if f"{name}.{n}" in modules}
            targets |= subs
            if len(subs) < len(names) or not names:
                owner = name
                while owner and owner not in modules:
                    owner = owner.rpartition(".")[0]
                if owner:
                    targets.add(owner)
        edges[module] = targets - {module}
    return edges


def find_cycle(edges: Mapping[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, …, a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def third_party(source: str) -> set[str]:
    return {name.split(".")[0] for name, _ in imported(source, "", False) if name}


def closure(edges: Mapping[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += edges.get(node, ())
    return seen


MODULES = sources(ROOT, ("sandbox", "server", "pallas_playground"))
PACKAGES = {
    module_name(p, ROOT)
    for package in ("sandbox", "server", "pallas_playground")
    for p in ROOT.glob(f"{package}/**/__init__.py")
}
EDGES = graph(MODULES, PACKAGES)


def against_the_table(edges: Mapping[str, set[str]]) -> list[str]:
    """Every import whose target's layer is not one its source's layer may import."""
    return sorted(
        f"{src} ({layer(src)}) imports {dst} ({layer(dst)})"
        for src, targets in edges.items()
        for dst in targets
        if layer(dst) not in ALLOWED[layer(src)]
    )


def test_every_import_follows_the_layer_table():
    wrong = against_the_table(EDGES)
    assert not wrong, "\n".join(wrong)


def test_every_server_module_has_a_layer():
    names = {m.split(".")[1] if "." in m else "" for m in MODULES if m.split(".")[0] == "server"}
    assert not names - set(SERVER_LAYERS), (
        f"place these in SERVER_LAYERS: {sorted(names - set(SERVER_LAYERS))}"
    )


def test_the_layers_point_one_way():
    # A layer's own modules may import each other; past that, no ring of layers (so none of folders).
    assert find_cycle({name: allowed - {name} for name, allowed in ALLOWED.items()}) is None


def test_the_server_folders_import_each_other_one_way():
    # Within a layer too: `server.<name>` modules and sub-packages as nodes, no cycle among them.
    def folder(module: str) -> str:
        return ".".join(module.split(".")[:2])

    folders: dict[str, set[str]] = {}
    for src, targets in EDGES.items():
        if src.startswith("server."):
            folders.setdefault(folder(src), set()).update(
                folder(d) for d in targets if d.startswith("server.") and folder(d) != folder(src)
            )
    assert find_cycle(folders) is None, find_cycle(folders)


def test_the_layer_check_sees_a_server_back_edge():
    edges = graph(
        {
            "server.wire.classes": "from server.store.classes import NAME_CHARS\n",  # wire → store
            "server.store.classes": "",
            "server.submit": "def f():\n    from server.classroom import progress\n",  # lazy, still counted
            "server.classroom.progress": "from server.submit import check_request\n",  # one way: fine
        }
    )
    assert against_the_table(edges) == [
        "server.submit (server.runs) imports server.classroom.progress (server.classroom)",
        "server.wire.classes (server.wire) imports server.store.classes (server.store)",
    ]


def test_route_modules_never_import_each_other():
    wrong = sorted(
        f"{src} imports {dst}"
        for src, targets in EDGES.items()
        if layer(src) == "server.routes"
        for dst in targets
        if layer(dst) == "server.routes"
    )
    assert not wrong, wrong


def test_there_is_no_import_cycle():
    assert find_cycle(EDGES) is None


def test_the_cycle_check_finds_a_deliberate_cycle(tmp_path):
    for name, text in {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "def f():\n    from pkg.c import g\n",  # a lazy import closes the cycle
        "pkg/c.py": "import pkg.a\n",
    }.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = graph(sources(tmp_path, ["pkg"]), {"pkg"})
    assert find_cycle(edges) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    del edges["pkg.c"]
    assert find_cycle(edges) is None


def test_the_layer_check_sees_a_forbidden_import():
    edges = graph({"sandbox.harness.x": "from sandbox.backends import local\n", "sandbox.backends.local": ""})
    assert [(layer(s), layer(d)) for s, ds in edges.items() for d in ds] == [("harness", "backends")]
    assert "backends" not in ALLOWED["harness"]


def test_the_protocol_imports_nothing_but_the_standard_library_and_itself():
    for module, source in MODULES.items():
        if layer(module) == "protocol":
            outside = third_party(source) - set(sys.stdlib_module_names) - {"sandbox", "__future__"}
            assert not outside, (module, outside)


def test_jax_is_imported_only_where_jobs_run():
    wrong = sorted(m for m, s in MODULES.items() if third_party(s) & JAX and layer(m) not in JAX_LAYERS)
    assert not wrong, wrong


@pytest.mark.parametrize(
    "start",
    [
        "server.app",
        "server.queue.redis_queue",
        "sandbox.backends.hardened",
        "sandbox.backends.service",
        "sandbox.worker.__main__",
    ],
)
def test_nothing_the_server_reaches_imports_jax(start):
    reached = closure(EDGES, start)
    with_jax = sorted(m for m in reached if third_party(MODULES[m]) & JAX)
    assert not with_jax, with_jax


# -- one JAX adapter ------------------------------------------------------------------------------
# JAX's internals (`jax._src`) change between versions without notice; one package reaches them, with
# one table of what each version needs (`sandbox/harness/jaxapi/versions.py`). Everything else uses
# its small API. Every import counts (lazy ones too), and so does a `jax._src…` name used as data (a
# module to import, a logger to listen to): those come from the adapter as well. Tests may still read
# JAX's internals to check the adapter against them.
ADAPTER = "sandbox.harness.jaxapi"


def internal_jax_uses(source: str) -> list[str]:
    """Every `jax._src` module `source` imports, then every string of code that names one."""
    found = [
        "jax._src" if name == "jax" else name
        for name, names in imported(source, "", False)
        if name.startswith("jax._src") or (name == "jax" and "_src" in names)
    ]
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("jax._src")
        ):
            found.append(node.value)
    return found


def test_only_the_jax_adapter_reaches_into_jax_internals():
    outside = {
        module: uses
        for module, source in {**MODULES, **sources(ROOT, ("bench",))}.items()
        if not (module == ADAPTER or module.startswith(f"{ADAPTER}.")) and (uses := internal_jax_uses(source))
    }
    assert not outside, f"only {ADAPTER} may use jax._src; go through its API: {outside}"


def test_the_adapter_check_sees_every_way_into_jax_internals():
    source = """
import jax._src.core
from jax import _src
from jax.experimental import pallas


def later():
    from jax._src.pallas.mosaic.interpret import utils
    importlib.import_module("jax._src.state")
    logging.getLogger("jax._src.callback")
"""
    assert internal_jax_uses(source) == [
        "jax._src.core",
        "jax._src",
        "jax._src.pallas.mosaic.interpret",
        "jax._src.state",
        "jax._src.callback",
    ]
    assert internal_jax_uses('"""About `jax._src.core`, in words."""\nimport jax\n') == []


def test_the_server_starts_without_loading_jax():
    code = (
        "import sys, server.app; assert not [m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')]"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_sandbox_never_imports_server():
    offenders = [m for m, s in MODULES.items() if m.startswith("sandbox") and "server" in third_party(s)]
    assert not offenders, offenders


def test_catalog_kernels_import_only_jax_numpy_and_the_standard_library():
    files = list((ROOT / "kernels_catalog").rglob("*.py"))
    assert files
    allowed = KERNEL_IMPORTS | set(sys.stdlib_module_names)
    offenders = {str(p): sorted(third_party(p.read_text()) - allowed) for p in files}
    assert not {k: v for k, v in offenders.items() if v}, offenders


def test_python_modules_stay_readable():
    # ~300 lines is normal, split near 400 (STYLE.md); a module that must be larger says why.
    long = {
        m: n for m, s in MODULES.items() if (n := len(s.splitlines())) > 400 and "must be larger" not in s
    }
    assert not long, long


# -- the shape of the house ----------------------------------------------------------------------
# Loose modules beside the sub-packages of `server/` and `sandbox/` (not counting __init__ and
# __main__): past this, a new module belongs in the sub-package named for what it is.
LOOSE_MODULES = 15
# Turning raw process facts into a RunResult happens in one place; every queue and the CLI call it.
CLASSIFIER, CHOKE_POINT = "sandbox.results.classify", "sandbox.backends.execute"


@pytest.mark.parametrize("package", ["server", "sandbox"])
def test_few_modules_stay_loose_beside_the_sub_packages(package):
    loose = sorted(
        p.name for p in (ROOT / package).glob("*.py") if p.name not in ("__init__.py", "__main__.py")
    )
    assert len(loose) <= LOOSE_MODULES, f"{package}/ has {len(loose)} loose modules: {loose}"


def test_only_the_execution_choke_point_classifies_results():
    users = sorted(m for m, targets in EDGES.items() if CLASSIFIER in targets)
    assert users == [CHOKE_POINT], f"classify() is called from {users}; go through {CHOKE_POINT}"


# -- one list of event kinds ---------------------------------------------------------------------
# The server forwards `FORWARDED_KINDS` (sandbox/backends/execute.py), the page listens for the kinds
# in `api.js`, the progress log and the status line describe each, and the API docs list them. They
# were four lists that disagreed (the page never listened for `progress` or `lowering`).
JS = ROOT / "frontend" / "static" / "js"
API_DOC = ROOT / "docs" / "api.md"


def js_list(name: str) -> list[str]:
    text = (JS / "api.js").read_text()
    found = re.search(rf"const {name} = \[(.*?)\];", text, re.S)
    assert found, f"api.js has no {name} list"
    return re.findall(r'"([a-z_]+)"', found.group(1))


def test_the_forwarded_kinds_are_protocol_kinds_and_the_queue_forwards_exactly_them():
    kinds = set(typing.get_args(EventKind))
    assert kinds >= FORWARDED_KINDS
    assert FORWARDED is FORWARDED_KINDS
    assert {k for k in kinds if forwarded(k, {}, 0.0) is not None} == FORWARDED_KINDS
    # What stays inside the job's own report: big payloads folded into the result, internal logs.
    assert kinds - FORWARDED_KINDS == {
        "trace",
        "estimate",
        "log",
        "done",
        "case_outputs",
        "expected",
        "config_outputs",
        "exported",  # a class run's program, for the host's rerun only
        "rerun",  # the host's rerun, folded into the result's host_timing
    }


def test_the_page_follows_exactly_the_kinds_the_server_streams():
    assert js_list("EVENT_KINDS") == list(RUN_STREAM_KINDS)
    assert js_list("SWEEP_EVENTS") == list(SWEEP_STREAM_KINDS)
    assert set(QUEUE_KINDS) <= set(RUN_STREAM_KINDS) & set(SWEEP_STREAM_KINDS)


def test_the_progress_log_and_the_status_line_describe_every_run_event():
    for module in ("progress.js", "runstatus.js"):
        text = (JS / module).read_text()
        described = set(re.findall(r'case "([a-z_]+)":', text))
        missing = set(RUN_STREAM_KINDS) - described - {"done"}
        assert not missing, f"{module} does not describe {sorted(missing)}"


def test_the_api_docs_list_every_run_event_in_the_stream_order():
    text = API_DOC.read_text()
    line = next(ln for ln in text.split("\n- ") if ln.startswith("`GET /api/runs/{id}/events`"))
    documented = re.findall(r"`([a-z_]+)`", line)
    assert [k for k in documented if k in RUN_STREAM_KINDS or k in FORWARDED_KINDS] == list(RUN_STREAM_KINDS)
