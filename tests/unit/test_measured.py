"""Measured configs recorded beside their estimates (`sandbox.results.measured`) and `tune --measure`
on a host without a TPU (this one): refused with a reason before anything runs."""

from __future__ import annotations

import dataclasses
import json

from sandbox.__main__ import main
from sandbox.protocol import ConfigResult
from sandbox.results import measured


def _config(index: int, estimated: float | None, device: float | None, host: float | None) -> ConfigResult:
    return ConfigResult(
        index=index,
        params={"bm": 128 * (index + 1)},
        status="ok",
        reason="correct",
        check_size={"m": 256},
        estimated_seconds=estimated,
        measured_seconds=device,
        measured_host_seconds=host,
    )


def test_records_keep_each_measured_config_beside_its_estimate(tmp_path):
    configs = [_config(0, 2e-3, 2.2e-3, 1.1e-4), _config(1, 1e-3, None, None), _config(2, None, 5e-3, None)]
    found = measured.records(
        configs, chip="v5e", file="k.py", entry=None, size={"m": 4096}, jax_version="0.12.0.1"
    )
    assert [r["params"] for r in found] == [{"bm": 128}, {"bm": 384}]  # the unmeasured one is left out
    path = tmp_path / "runs.jsonl"
    measured.append(path, found)
    measured.append(path, found[:1])
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["measured_host_seconds"] == 1.1e-4
    errors = [e for _, e in measured.compare(path)]
    assert errors[0] == errors[2] and abs(errors[0] - (2e-3 / 2.2e-3 - 1)) < 1e-12
    assert errors[1] is None  # no estimate to compare
    refused = measured.records(
        [dataclasses.replace(configs[0], xla_not_measured="it did not run jitted")],
        chip="v5e", file="k.py", entry=None, size={"m": 4096}, jax_version="0.12.0.1",
    )  # fmt: skip
    assert refused[0]["xla_not_measured"] == "it did not run jitted" and "xla_not_measured" not in found[0]


def test_tune_measure_is_refused_without_a_tpu(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sandbox.host.tpu_report.discover", lambda: None)
    kernel = tmp_path / "k.py"
    kernel.write_text("def kernel(x): return x\n")
    assert main(["tune", str(kernel), "--param", "bm=128", "--measure"]) == 2
    assert capsys.readouterr().err == (
        "error: --measure times configs on this machine's TPU, but there is no TPU on this machine\n"
    )
    assert not (tmp_path / "tune-measurements.jsonl").exists()
