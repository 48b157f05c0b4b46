"""Load user (and reference) source as modules under stable file names.

Sources are registered with `linecache` as `kernel.py` / `reference.py`, so tracebacks and JAX's
source records name the user's own lines; `sandbox.harness.errors` keeps only those frames.
"""

from __future__ import annotations

import linecache
import sys
import types

USER_FILE = "kernel.py"
REFERENCE_FILE = "reference.py"


def load_module(name: str, source: str, filename: str) -> types.ModuleType:
    """Compile and execute `source` as a fresh module registered in sys.modules."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module
