"""Handles on JAX's TPU interpret mode (`jax._src.pallas.mosaic.interpret`) for the harness's hooks.

The monitor and the kernel trace wrap functions of the interpreter's modules; they get those modules
from here, each imported when first asked for (importing this module imports nothing of JAX). What
they wrap, and on which version, they check themselves against `versions.support(...)`.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

# The loggers JAX writes to, by name: the race detector's (reads) and the host callbacks' (failures).
RACE_LOGGER = "jax._src.pallas.mosaic.interpret.race_detection_state"
CALLBACK_LOGGER = "jax._src.callback"
RACE_PREFIX = "RACE DETECTED"


def interpreter() -> ModuleType:
    """`interpret_pallas_call`, the module whose functions run every interpreted kernel."""
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call

    return interpret_pallas_call


def shared_memory() -> ModuleType:
    """The interpreter's simulated memories and semaphores."""
    from jax._src.pallas.mosaic.interpret import shared_memory

    return shared_memory


def thread_map() -> ModuleType:
    """The interpreter's threads, one per simulated core."""
    from jax._src.pallas.mosaic.interpret import thread_map

    return thread_map


def tensor_core_mesh() -> type:
    """`TensorCoreMesh`: a mesh whose cores the interpreter really simulates (one thread each)."""
    from jax._src.pallas.mosaic.core import TensorCoreMesh

    return TensorCoreMesh


def interpret_params_type() -> type:
    """The interpreter's own `InterpretParams` class (the one `pltpu.InterpretParams` names)."""
    from jax._src.pallas.mosaic.interpret.params import InterpretParams

    return InterpretParams


def to_range(transforms: Any) -> Any:
    """The interpreter's transforms (NDIndexers) → one slice or int per dimension, as its own `get`
    does: concrete ints first, then its composition of indexers."""
    import jax
    from jax._src.pallas.mosaic.interpret import utils

    return utils.to_range(jax.tree.map(int, transforms))


def current_source_info() -> Any:
    """The source info of the operation being traced now (`source_info_util.current()`)."""
    from jax._src import source_info_util

    return source_info_util.current()


def races_found() -> bool:
    """Whether the race detector found a race in the kernels run so far."""
    state = getattr(interpreter(), "races", None)
    return bool(state is not None and state.races_found)


def route_race_reports() -> bool:
    """On a version whose race detector prints its reports, log them instead (as `on_race="warn"`
    does); True if the detector was changed. Idempotent."""
    from jax._src.pallas.mosaic.interpret import race_detection_state

    module: Any = race_detection_state
    if getattr(module, "print", None) is _log_race_report:
        return True
    if not hasattr(module, "RaceDetectionState") or hasattr(module.RaceDetectionState, "on_race"):
        return False
    module.print = _log_race_report  # the module's own name lookup finds this before the builtin
    return True


def _log_race_report(*args: Any, **kwargs: Any) -> None:
    text = " ".join(str(a) for a in args)
    if text.startswith(RACE_PREFIX):
        # The root logger, where jax 0.12 logs write races too: `RaceLog` listens there.
        logging.getLogger().warning("%s", text.rstrip("\n"))
    else:
        print(*args, **kwargs)
