"""A share → its notebook: a markdown head (what it does, the share, the estimate), a cell of the share's
constants (chip, JAX version, cases, tolerances, interpret options, the kernel's and the reference's
sources), then the cells of `cells/`: install, set up, check, measure; and how to bring the
measurement back."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import nbformat
from nbformat import v4

from sandbox.catalog.entries import CatalogEntry
from sandbox.protocol import to_json_dict
from sandbox.protocol.chips import Chip, chip_info
from sandbox.protocol.device_kinds import NATIVE_DEVICE_KINDS
from server.notebook.kept import KeptEstimate, markdown_text

CELLS = Path(__file__).parent / "cells"
# Without a catalog entry, a scratch file's own `make_inputs(seed)` makes the one case's inputs.
SCRATCH_CASE = {"name": "scratch", "dtype": "", "seed": 0, "dims": {}, "tpu_only": False}


@dataclass(frozen=True)
class SharedKernel:
    """What a share's notebook is made of."""

    share_id: str
    page_url: str  # the share's page, absolute
    source: str
    entry: CatalogEntry | None
    chip: Chip
    options: dict[str, Any]  # interpret options, the entry's defaults under the share's choices
    jax_version: str
    devices: int
    estimate: KeptEstimate | None = None  # the TPU time model's estimate kept with the share (`kept`)
    status: str | None = None  # the verdict kept with the share (a RunStatus value, `kept.status`)


def notebook(kernel: SharedKernel) -> nbformat.NotebookNode:
    """The notebook (nbformat v4, validated)."""
    cells = [
        v4.new_markdown_cell(_head(kernel)),
        v4.new_code_cell(_constants(kernel)),
        v4.new_code_cell(_cell("install")),
        v4.new_code_cell(_cell("setup")),
        v4.new_code_cell(_sources(kernel)),
        v4.new_code_cell(_cell("check")),
        v4.new_code_cell(_cell("trace") + "\n\n" + _cell("measure")),
        v4.new_markdown_cell(_tail(kernel)),
    ]
    book = v4.new_notebook(cells=cells)
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    book.metadata["language_info"] = {"name": "python"}
    book.metadata["pallas_playground"] = {
        "share": kernel.share_id,
        "chip": kernel.chip,
        "jax": kernel.jax_version,
    }
    nbformat.validate(book)
    return book


def code_cells(book: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in book.cells if cell.cell_type == "code"]


@cache
def _cell(name: str) -> str:
    return (CELLS / f"{name}.py.txt").read_text().rstrip() + "\n"


def _constants(kernel: SharedKernel) -> str:
    entry = kernel.entry
    cases = [_case(c) for c in entry.cases] if entry else [SCRATCH_CASE]
    tolerances = {k: [t.rtol, t.atol] for k, t in entry.tolerances.items()} if entry else None
    info = chip_info(kernel.chip)
    values: list[tuple[str, Any, str]] = [
        ("SHARE", kernel.share_id, "the share this notebook was made from"),
        ("CHIP", kernel.chip, "the chip it targets"),
        ("CHIP_KIND", info.device_kind, "off a TPU, the simulator pretends to be this device"),
        ("CHIP_CORES", info.device_tensor_cores, "the TensorCores one JAX device of it spans"),
        ("NATIVE_KINDS", {c: list(k) for c, k in NATIVE_DEVICE_KINDS.items()}, "device kinds per chip"),
        ("JAX_VERSION", kernel.jax_version, "the JAX it was shared with"),
        ("INTERPRET_OPTIONS", _interpret(kernel.options), "pltpu.InterpretParams off a TPU"),
        ("DEVICES", kernel.devices, "devices the kernel runs on"),
        ("CASES", cases, "the inputs' shapes, dtypes and seeds"),
        ("MUTABLE_INPUTS", list(entry.mutable_inputs) if entry else [], "inputs the kernel updates in place"),
    ]
    lines = [f"{name} = {value!r}  # {why}" for name, value, why in values]
    if tolerances is not None:
        lines.append(f"TOLERANCES = {tolerances!r}  # (rtol, atol) per dtype")
    return (
        "# The share's constants (made by the playground; the cells below read them).\n"
        + "\n".join(lines)
        + "\n"
    )


def _sources(kernel: SharedKernel) -> str:
    """The kernel's file (and a catalog entry's reference) as module sources, run as their own modules:
    edit KERNEL_SOURCE to try a change (the measurement's hash then says it is another kernel)."""
    lines = [
        f"KERNEL_SOURCE = {_literal(kernel.source)}",
        'kernel_module = module_of("kernel", KERNEL_SOURCE)',
    ]
    if kernel.entry is not None:
        lines += [
            f"REFERENCE_SOURCE = {_literal(kernel.entry.reference_source)}",
            'reference_module = module_of("reference", REFERENCE_SOURCE)',
            f"KERNEL = kernel_module[{kernel.entry.entry_point!r}]",
            'MAKE_INPUTS, REFERENCE = reference_module["make_inputs"], reference_module["reference"]',
        ]
    else:  # scratch mode: the file has make_inputs(seed), kernel(*inputs), maybe reference and TOLERANCE
        lines += [
            'KERNEL = kernel_module["kernel"]',
            'MAKE_INPUTS = lambda case: kernel_module["make_inputs"](case.seed)',
            'REFERENCE = kernel_module.get("reference")',
            'declared = kernel_module.get("TOLERANCE") or {}',
            'TOLERANCES = {"*": (declared["rtol"], declared["atol"])} if set(declared) == {"rtol", "atol"} else '
            "{k: (v['rtol'], v['atol']) if isinstance(v, dict) else tuple(v) for k, v in declared.items()}",
        ]
    return "\n".join(lines) + "\n"


def _literal(text: str) -> str:
    """`text` as a Python literal that reads like the file: a raw triple-quoted string when it can be."""
    plain = not any(part in text for part in ("'''", "\r", "\x00"))
    if plain and not text.endswith(("\\", "'")):  # a raw string cannot end in either
        return "r'''" + text + "'''"
    return repr(text)


def _case(case: Any) -> dict[str, Any]:
    data = to_json_dict(case)
    return {
        "name": data["name"],
        "dtype": data["dtype"],
        "seed": data["seed"],
        "dims": data["dims"],
        "tpu_only": data["tpu_only"],
    }


def _interpret(options: dict[str, Any]) -> dict[str, Any]:
    params = dict(options)
    if params.get("detect_races"):
        params["on_race"] = "warn"  # report races as findings, not as a crash of the first access
    return params


def _head(kernel: SharedKernel) -> str:
    """Built from fields the server checked only (`server.notebook.kept`), each escaped as text."""
    what = (
        f"catalog exercise {markdown_text(kernel.entry.slug)} ({markdown_text(kernel.entry.title)})"
        if kernel.entry
        else "a scratch kernel"
    )
    estimate = ""
    if kernel.estimate:
        bound = f" ({kernel.estimate.bound.replace('_', ' ')}-bound)" if kernel.estimate.bound else ""
        estimate = (
            f"\n\nThe playground's TPU time model estimated **{_ms(kernel.estimate.seconds)}** on a TPU "
            f"{markdown_text(kernel.estimate.chip)} for the first case{bound}."
        )
    verdict = f" Its kept result there: **{markdown_text(kernel.status)}**." if kernel.status else ""
    if kernel.entry is not None and kernel.entry.interpret_notes:
        # The playground's own interpret-mode fixes are not in the notebook: say what the entry needs.
        estimate += (
            f"\n\nIn the playground's simulator: {kernel.entry.interpret_notes} This notebook has JAX's "
            "interpret mode only, without the playground's fixes."
        )
    return (
        f"# Pallas kernel from the playground: {what}\n\n"
        f"Shared at {_link(kernel.page_url)} for a TPU **{markdown_text(kernel.chip)}** on JAX "
        f"**{markdown_text(kernel.jax_version)}**.{verdict}"
        f"{estimate}\n\n"
        "**This notebook runs the share's code in your runtime, with your runtime's permissions, not in "
        "the playground's sandbox: read the kernel cell before you run it.**\n\n"
        "Run all cells. On a TPU runtime (Colab, Kaggle, a TPU VM) the kernel runs natively and is timed "
        "on the device from a profiler trace; anywhere else it runs in Pallas TPU interpret mode on the "
        "CPU (checked, but its times are the simulator's). The check holds every output to the same "
        "tolerances as the playground's checker. The last cell prints one JSON line: the measurement."
    )


def _tail(kernel: SharedKernel) -> str:
    api = (
        kernel.page_url.replace("/s/", "/api/shares/") + "/measurements"
        if PAGE_URL.match(kernel.page_url)
        else f"/api/shares/{kernel.share_id}/measurements"  # on the playground's own address
    )
    return (
        "## Bring the measurement back\n\n"
        f"Paste the JSON line printed above into **Add a measurement** on {_link(kernel.page_url)}, or send it "
        "from this notebook:\n\n"
        "```python\n"
        "import urllib.request\n"
        f"request = urllib.request.Request({api!r}, method='POST', headers={{'Content-Type': 'application/json'}},\n"
        "                                 data=json.dumps({'line': json.dumps(measurement)}).encode())\n"
        "print(urllib.request.urlopen(request).read().decode())\n"
        "```\n\n"
        "The share then shows it beside the estimate, labelled as user-reported. Only a time measured on a "
        "TPU (not in interpret mode) of this very kernel (the same source hash) is taken."
    )


# A share's page as the server builds it (the request's base URL may carry a forged Host header).
PAGE_URL = re.compile(r"^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~\-]+)*/s/[A-Za-z0-9_\-]{1,16}$")


def _link(url: str) -> str:
    return f"<{url}>" if PAGE_URL.match(url) else markdown_text(url)


def _ms(seconds: Any) -> str:
    return f"{seconds * 1e3:.3g} ms" if isinstance(seconds, int | float) else "?"


def to_json(book: nbformat.NotebookNode) -> str:
    return nbformat.writes(book)
