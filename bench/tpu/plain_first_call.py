"""The baseline for the playground's first verdict on a chip: a plain script, no playground code, that
imports JAX, makes a catalog entry's first case, calls its kernel once and checks it. Prints JSON with
where the time went. `python bench/tpu/plain_first_call.py [ENTRY]` on a TPU VM."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
import tomllib
from pathlib import Path
from types import SimpleNamespace

started = time.perf_counter()
import jax  # noqa: E402
import numpy as np  # noqa: E402

imported = time.perf_counter()
entry = sys.argv[1] if len(sys.argv) > 1 else "tiled_matmul_pallas_call"
folder = Path(__file__).resolve().parents[2] / "kernels_catalog" / entry


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


meta = tomllib.loads((folder / "entry.toml").read_text())
kernel, reference = load("kernel"), load("reference")
case = next(c for c in meta["cases"] if c["dtype"] == "bfloat16")


inputs = reference.make_inputs(SimpleNamespace(**case, **case["dims"]))
jax.devices()
opened = time.perf_counter()
got = np.asarray(getattr(kernel, meta["entry_point"])(*inputs).astype(np.float32))
called = time.perf_counter()
want = np.asarray(reference.reference(*inputs).astype(np.float32))
tol = meta["tolerances"]["bfloat16"]
passed = bool(np.allclose(got, want, rtol=tol["rtol"], atol=tol["atol"]))
done = time.perf_counter()
print(
    json.dumps(
        {
            "entry": entry,
            "case": case["name"],
            "passed": passed,
            "device": jax.devices()[0].device_kind,
            "import_s": round(imported - started, 3),
            "inputs_and_open_s": round(opened - imported, 3),
            "first_call_s": round(called - opened, 3),
            "check_s": round(done - called, 3),
            "total_s": round(done - started, 3),
        }
    )
)
