"""The capability probe: what the playground can do on the JAX it runs under, and that JAX's public names.

`scripts/install-runtimes` runs it once per runtime, with that runtime's interpreter, and stores its
JSON beside the runtime (`runtime.json`); the server reads the file and never imports JAX itself.
Every feature is found by trying it, the way a job would use it: a tiny kernel runs in TPU interpret
mode and goes through the harness's own TPU lowering check, and the JAX-internal hooks are installed
as a job installs them. `names` lists the public names of the modules kernels use, so an
`AttributeError` in one runtime can say in which other runtimes the name exists.

    python -I -c "import sys; sys.path.insert(0, ROOT); from sandbox.harness.probe import main; main()"
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import json
import os
import platform
import sys
from typing import Any

OPTIONS = (
    "detect_races",
    "uninitialized_memory",
    "dma_execution_mode",
    "random_seed",
    "out_of_bounds_reads",
    "buffer_bounds",
)


def public_names(module: Any) -> list[str]:
    """The module's public names, deprecated ones it still answers to included."""
    names = {n for n in dir(module) if not n.startswith("_")}
    deprecated = getattr(module, "_deprecations", None) or {}
    with contextlib.redirect_stderr(io.StringIO()):
        names |= {n for n in deprecated if _answers(module, n)}
    return sorted(names)


def _answers(module: Any, name: str) -> bool:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(module, name)
        except AttributeError:
            return False
    return True


def names() -> dict[str, list[str]]:
    from sandbox.harness.compat import INDEXED

    found = {}
    for alias, module in INDEXED.items():
        try:
            found[alias] = public_names(importlib.import_module(module))
        except ImportError:
            found[alias] = []
    return found


def feature(available: bool, detail: str) -> dict[str, Any]:
    return {"available": available, "detail": detail}


def features() -> dict[str, dict[str, Any]]:
    """Each feature the runtimes page lists: whether it works here, and how (or why not)."""
    import jax
    from jax.experimental.pallas import tpu as pltpu

    from sandbox.harness.jaxapi import versions

    version = jax.__version__
    fields = {f.name for f in dataclasses.fields(pltpu.InterpretParams)}
    options = [o for o in OPTIONS if o in fields]
    found = {
        "interpret_options": feature(bool(options), ", ".join(options)),
        "race_detection": feature(
            "detect_races" in fields,
            "the detector logs each race (on_race='warn')"
            if "on_race" in fields
            else "the detector prints each race; the playground reads it as a finding",
        ),
        "core_meshes": _core_meshes(pltpu, version),
        "sparsecore": _sparsecore(version),
    }
    found.update(_hooks(version))
    found.update(_lowering(version))
    if not found["race_detection"]["available"]:
        found["race_detection"]["detail"] = versions.not_available(version)
    return found


def _core_meshes(pltpu: Any, version: str) -> dict[str, Any]:
    from sandbox.harness.jaxapi import versions

    if hasattr(pltpu, "TensorCoreMesh"):
        return feature(True, "pltpu.TensorCoreMesh")
    if hasattr(pltpu, "create_tensorcore_mesh"):
        return feature(
            True,
            "pltpu.create_tensorcore_mesh (pltpu.TensorCoreMesh is " + versions.not_available(version) + ")",
        )
    return feature(False, versions.not_available(version))


def _sparsecore(version: str) -> dict[str, Any]:
    from sandbox.harness.jaxapi import versions

    try:
        plsc = importlib.import_module("jax.experimental.pallas.tpu_sc")
    except ImportError:
        return feature(False, versions.not_available(version))
    meshes = [m for m in ("ScalarSubcoreMesh", "VectorSubcoreMesh") if hasattr(plsc, m)]
    return feature(bool(meshes), ", ".join(f"plsc.{m}" for m in meshes) or versions.not_available(version))


def _hooks(version: str) -> dict[str, dict[str, Any]]:
    """The hooks pinned to one JAX's internals, installed as a job installs them."""
    from sandbox.harness.jaxapi import interpret_fixes
    from sandbox.harness.monitor import hooks
    from sandbox.harness.trace import capture

    monitor = hooks.install(("kernel.py",))
    trace = capture.install()
    fixes = interpret_fixes.install(device_kind="TPU v5e")  # as a job simulating a v5e installs them
    return {
        "monitor": feature(
            monitor.available, monitor.reason or "deadlock detection, live progress, your names in errors"
        ),
        "trace": feature(trace.available, trace.reason or "DMAs, semaphores, grid and pipeline steps"),
        "interpret_fixes": feature(bool(fixes), ", ".join(fixes) or interpret_fixes.reason(version)),
    }


def _lowering(version: str) -> dict[str, dict[str, Any]]:
    """Run a tiny kernel in interpret mode, then the harness's TPU lowering check on it."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    from sandbox.harness.jaxapi import versions
    from sandbox.harness.lowering import check
    from sandbox.harness.target import configure
    from sandbox.protocol import InterpretOptions

    def add_one_kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] + 1.0

    def add_one(x: Any) -> Any:
        spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
        return pl.pallas_call(
            add_one_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            grid=(2,),
            in_specs=[spec],
            out_specs=spec,
        )(x)

    target = configure("v5e", "interpret", InterpretOptions())
    x = jnp.zeros((16, 128), jnp.float32)
    with target.chip_context():
        ran = bool((jax.jit(add_one)(x) == 1.0).all())
    report = check.check(add_one, (x,), target, "v5e")
    views = [name for name in ("jaxpr", "mosaic", "stablehlo") if getattr(report, name) is not None]
    why = report.error.message if report.error else report.note
    return {
        "interpret_mode": feature(
            ran, "pl.pallas_call and pl.kernel in TPU interpret mode" if ran else "a tiny kernel failed"
        ),
        "lowering_check": feature(
            report.lowers is True,
            "the real Pallas → Mosaic lowering, per chip"
            if report.lowers
            else versions.not_available(version, why),
        ),
        "ir_views": feature(bool(views), ", ".join(views) or versions.not_available(version)),
    }


def _dist(name: str) -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def probe() -> dict[str, Any]:
    import jax

    return {
        "jax": jax.__version__,
        "jaxlib": _dist("jaxlib"),
        "libtpu": _dist("libtpu"),
        "python": platform.python_version(),
        "features": features(),
        "names": names(),
    }


def main() -> int:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    out = sys.stdout
    # JAX and the kernel may print; only the JSON goes to the real stdout.
    with contextlib.redirect_stdout(sys.stderr):
        found = probe()
    out.write(json.dumps(found, sort_keys=True) + "\n")
    return 0
