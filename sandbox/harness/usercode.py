"""Load user (and reference) source as modules under stable file names.

Sources are registered with `linecache` as `kernel.py` / `reference.py`, so tracebacks and JAX's
source records name the user's own lines; `sandbox.harness.errors` keeps only those frames.
"""

from __future__ import annotations

import linecache
import sys
import types
from collections.abc import Callable
from typing import Any

USER_FILE = "kernel.py"
REFERENCE_FILE = "reference.py"
# A scratch file's optional function: what a user would call instead of its kernel (e.g.
# `jax.nn.dot_product_attention`), where its `reference` is written for accuracy, not speed.
XLA_BASELINE = "xla_baseline"


def load_module(name: str, source: str, filename: str) -> types.ModuleType:
    """Compile and execute `source` as a fresh module registered in sys.modules."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def xla_baseline(module: types.ModuleType) -> Callable[..., Any] | None:
    """XLA's own op the kernel's time is shown against: the file's `xla_baseline`, else its
    `reference` (a plain-jnp reference is what a user would run instead); None without either."""
    found = getattr(module, XLA_BASELINE, None)
    if callable(found):
        return found
    reference = getattr(module, "reference", None)
    return reference if callable(reference) else None
