"""The two internals the real TPU lowering check needs: Mosaic's source-location setting and an MLIR
context with JAX's dialects (to decode serialized Mosaic back to text)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any


def keep_mosaic_locations() -> contextlib.AbstractContextManager[Any]:
    """A context in which Mosaic keeps source locations inside the serialized module (instead of a
    separate blob), so decoded Mosaic text maps back to kernel.py lines; a no-op where JAX lacks it."""
    from jax._src import config

    setting: Callable[[bool], contextlib.AbstractContextManager[Any]] | None = getattr(
        config, "jax_mosaic_unzip_debug_locations", None
    )
    return setting(False) if setting is not None else contextlib.nullcontext()


def ir_context() -> Any:
    """A fresh MLIR context with JAX's dialects registered (`mlir.make_ir_context()`)."""
    from jax._src.interpreters import mlir

    return mlir.make_ir_context()
