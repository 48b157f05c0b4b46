"""How a class's finished runs are read on the teacher's grid: a scratch step whose lesson file writes
a Pallas kernel asks the students for one, as a catalog exercise does.

A run on a catalog step that matches without a Pallas kernel is `no_kernel` (the classifier knows
the entry expects one). A scratch step's run is checked by the lesson file's reference, but the
classifier has no word that the lesson asks for a kernel, so plain jnp that matches came back
`passed`, and ranked on a challenge's board. Here the grid reads it as the catalog path would: a
`passed` verdict of the lesson's reference on a step whose lesson file imports Pallas, with a case
whose program ran no Pallas kernel (`kernels == 0`, as the kernel's process counted them: the same
count the classifier believes for a catalog exercise), is `no_kernel` on the grid and in the CSV,
and never ranks. (The student's own result says what the classifier said; SECURITY.md, issue 41.)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from sandbox.results.checked_by import CHECKED_BY_LESSON

PALLAS = "jax.experimental.pallas"
NO_KERNEL_HEADLINE = (
    "correct, but no Pallas kernel ran (pallas_call or pl.kernel): this step of the lesson asks for one"
)


@dataclass(frozen=True)
class Judging:
    """What reading a class's runs needs of its lesson: the chip each challenge step ranks on, and
    the steps whose lesson file writes a Pallas kernel."""

    chips: dict[int, str] = field(default_factory=dict)
    kernel_steps: frozenset[int] = frozenset()


def writes_a_kernel(source: str) -> bool:
    """Whether a lesson step's file imports Pallas (read, never run; a file that does not parse: no).
    A file nested too deep for the parser raises RecursionError or MemoryError, not SyntaxError: it
    made every view of a class on that lesson a 500 (issue 41, fifth round)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_is_pallas(a.name) for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            named = (f"{node.module}.{a.name}" for a in node.names)
            if _is_pallas(node.module) or any(_is_pallas(name) for name in named):
                return True
    return False


def _is_pallas(module: str) -> bool:
    return module == PALLAS or module.startswith(PALLAS + ".")


def kernel_steps(steps: list[tuple[str | None, str]]) -> frozenset[int]:
    """The 1-based steps (each `(entry, source)`) that are scratch files writing a Pallas kernel."""
    return frozenset(
        k for k, (entry, source) in enumerate(steps, 1) if entry is None and writes_a_kernel(source)
    )


def verdict(result: dict[str, Any], step: int, judging: Judging) -> tuple[str, str] | None:
    """(`no_kernel`, its headline) when the grid reads `result` on `step` so (see the module doc)."""
    if step not in judging.kernel_steps or result.get("status") != "passed":
        return None
    if result.get("checked_by") != CHECKED_BY_LESSON:
        return None
    cases = result.get("cases")
    if isinstance(cases, list) and any(isinstance(c, dict) and c.get("kernels") == 0 for c in cases):
        return "no_kernel", NO_KERNEL_HEADLINE
    return None
