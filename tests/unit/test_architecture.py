"""Layering rules, checked on the source: sandbox/ never imports server/; catalog kernels stay plain."""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL_IMPORTS = {"jax", "numpy", "ml_dtypes"}


def imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_sandbox_never_imports_server():
    offenders = [str(p) for p in (ROOT / "sandbox").rglob("*.py") if "server" in imports(p)]
    assert not offenders, offenders


def test_catalog_kernels_import_only_jax_numpy_and_the_standard_library():
    files = list((ROOT / "kernels_catalog").rglob("*.py"))
    assert files
    allowed = KERNEL_IMPORTS | set(sys.stdlib_module_names)
    offenders = {str(p): sorted(imports(p) - allowed) for p in files if imports(p) - allowed}
    assert not offenders, offenders


def test_server_never_imports_jax():
    # Jobs import JAX in their own processes; the server stays light and fork-safe.
    offenders = [str(p) for p in (ROOT / "server").rglob("*.py") if {"jax", "jaxlib"} & imports(p)]
    assert not offenders, offenders
