"""A measurement line brought back from a share's notebook, checked before it is stored: it must be the
notebook's JSON line (at most `LINE_CHARS`), of this share, of this very kernel (its source's hash),
measured on a TPU (not in interpret mode) with a device time, by a check that passed. Each refusal
is a 422 that says what is wrong and what to paste instead."""

from __future__ import annotations

import hashlib
import json
from typing import Any, NoReturn

from pydantic import ValidationError

from sandbox.protocol.device_kinds import NATIVE_DEVICE_KINDS
from server.notebook.kept import KeptEstimate
from server.problems import ProblemError, field_error
from server.store.measurements import Measurement
from server.store.shares import Share
from server.wire.measurements import LINE_CHARS, MeasurementLine

LONGEST_SECONDS = 3600.0
SHORTEST_SECONDS = 1e-7  # 100 ns: less than any kernel launch on a TPU takes (5e-324 showed as "0.00 µs")


def measurement(line: str, share: Share) -> Measurement:
    """The measurement `line` reports for `share`, or the 422 that refuses it."""
    parsed = _parse(line)
    _check_is_of(parsed, share)
    return Measurement(
        share=share.id,
        chip=parsed.chip,
        device_kind=parsed.device_kind,
        jax=parsed.jax,
        jaxlib=parsed.jaxlib,
        kernel_sha256=parsed.kernel_sha256,
        case=parsed.case,
        verdict=parsed.verdict,
        device_seconds=float(parsed.device_seconds or 0.0),
        wall_seconds=parsed.wall_seconds,
        method=parsed.method,
    )


def describe(found: Measurement, estimate: KeptEstimate | None) -> str:
    """'measured on a TPU v5e (user-reported): 1.92 ms; estimated 1.80 ms'."""
    text = f"measured on a TPU {found.chip} (user-reported): {_time(found.device_seconds)}"
    if estimate is not None:
        where = "" if estimate.chip == found.chip else f" for a TPU {estimate.chip}"
        text += f"; estimated{where} {_time(estimate.seconds)}"
    return text


def _parse(line: str) -> MeasurementLine:
    text = line.strip()
    if len(text) > LINE_CHARS:
        _refuse(
            f"the line is {len(text):,} characters; a measurement line is at most {LINE_CHARS:,}: paste only "
            "the one JSON line the notebook's last cell printed"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        _refuse(
            f"the line is not JSON ({exc.msg} at character {exc.pos}): paste the line that starts with {{"
        )
    if not isinstance(data, dict) or "pallas_playground_measurement" not in data:
        _refuse(
            'this JSON is not a measurement line: paste the line that starts with {"pallas_playground_measurement"'
        )
    try:
        return MeasurementLine.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        errors = [field_error(dict(e)) for e in exc.errors()]
        first = errors[0]
        _refuse(f"{first['field']}: {first['message']}", errors=errors)


def _check_is_of(parsed: MeasurementLine, share: Share) -> None:
    if parsed.share != share.id:
        _refuse(f"this line measured share {parsed.share!r}, not this one ({share.id!r})", field="share")
    if parsed.interpret or parsed.device_seconds is None:
        _refuse(
            "this line was measured in interpret mode on a CPU (or without a device time): only a time "
            "measured on a TPU is taken; run the notebook on a TPU runtime",
            field="interpret",
        )
    if parsed.device_kind not in NATIVE_DEVICE_KINDS.get(parsed.chip, ()):
        # The notebook names the chip by the device kind JAX reports (`cells/setup.py.txt`).
        _refuse(
            f"device_kind {parsed.device_kind[:40]!r} is not a TPU {parsed.chip}'s: paste the line as the "
            "notebook printed it",
            field="device_kind",
        )
    if parsed.kernel_sha256 != hashlib.sha256(share.record.source.encode()).hexdigest():
        _refuse(
            "this line measured another kernel than this share's (its source's hash differs): share the "
            "edited kernel, open its notebook and measure that",
            field="kernel_sha256",
        )
    if parsed.verdict == "mismatch":
        _refuse(
            "the notebook's check failed (mismatch): a time of wrong outputs is not taken", field="verdict"
        )
    if not SHORTEST_SECONDS <= parsed.device_seconds < LONGEST_SECONDS:
        _refuse(
            f"device_seconds must be at least {SHORTEST_SECONDS:g} (no kernel on a TPU is quicker) and below "
            f"{LONGEST_SECONDS:.0f}",
            field="device_seconds",
        )


def _refuse(detail: str, **extensions: Any) -> NoReturn:
    raise ProblemError(422, "Not a measurement of this share", detail, **extensions)


def _time(seconds: float) -> str:
    """Three significant digits, trailing zeros kept (1.80 ms, 12.3 µs, 250 ms)."""
    value, unit = (seconds * 1e3, "ms") if seconds >= 1e-3 else (seconds * 1e6, "µs")
    decimals = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:.{decimals}f} {unit}"
