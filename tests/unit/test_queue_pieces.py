"""Pure pieces of the multi-host queue: where a job goes, the TPU slot seam, JSON logs with the run id,
and the metrics renderer."""

from __future__ import annotations

import json
import logging

import pytest

from sandbox.host import logfmt
from sandbox.queue.keys import check_pool_name, pool_for
from sandbox.worker.slots import SlotLayoutError, slot_backends
from server.queue.fairness import fair_order
from server.queue.metrics import Histogram, MetricsSnapshot, render


@pytest.mark.parametrize(
    ("mode", "chip", "live", "pool"),
    [
        ("interpret", "v5e", {"tpu-v5e", "interpret"}, "interpret"),
        ("auto", "v5e", {"interpret"}, "interpret"),
        ("auto", "v5e", {"tpu-v5e", "interpret"}, "tpu-v5e"),
        ("auto", "v6e", {"tpu-v5e", "interpret"}, "interpret"),
        ("tpu", "v6e", {"interpret"}, "tpu-v6e"),  # refused later: no live worker there
        ("both", "v5e", {"tpu-v5e", "interpret"}, "tpu-v5e"),  # a chip's worker runs both halves
    ],
)
def test_a_job_goes_to_its_chips_pool_only_when_it_should(mode, chip, live, pool):
    assert pool_for(mode, chip, live) == pool


def test_pool_names_are_checked():
    assert check_pool_name("tpu-v5e") == "tpu-v5e"
    with pytest.raises(ValueError, match="not a pool name"):
        check_pool_name("Interpret:*")


def test_a_tpu_pool_runs_only_through_the_hardened_backends_chip_slots():
    with pytest.raises(SlotLayoutError, match="only the hardened backend confines"):
        slot_backends("local", "tpu-v5e", 4)
    assert pool_for("tpu", "tpu7x", set()) == "tpu7x"


def test_fair_order_interleaves_addresses_then_browsers():
    snapshot = [[["a1", "a2", "a3"], ["b1"]], [["c1", "c2"]]]
    assert fair_order(snapshot) == ["a1", "c1", "b1", "c2", "a2", "a3"]


def test_json_logs_carry_the_run_id_on_every_line_within_its_context():
    record = logging.LogRecord("server.x", logging.WARNING, __file__, 1, "lost %s", ("it",), None)
    handler_filter, formatter = logfmt.RunIdFilter(), logfmt.JsonFormatter()
    with logfmt.run_context("RUN123"):
        handler_filter.filter(record)
    line = json.loads(formatter.format(record))
    assert (line["run_id"], line["message"], line["level"]) == ("RUN123", "lost it", "WARNING")
    outside = logging.LogRecord("server.x", logging.INFO, __file__, 1, "idle", (), None)
    handler_filter.filter(outside)
    assert json.loads(formatter.format(outside))["run_id"] is None and outside.run == ""


def test_metrics_render_in_the_prometheus_format():
    latency = Histogram()
    for seconds in (0.07, 3.0):
        latency.observe(seconds)
    snapshot = MetricsSnapshot(
        runs={("interpret", "passed"): 2}, latency={"interpret": latency}, workers={"interpret": 3}
    )
    text = render(snapshot).decode()
    assert 'playground_runs_total{pool="interpret",status="passed"} 2.0' in text
    assert 'playground_run_latency_seconds_bucket{le="0.1",pool="interpret"} 1.0' in text
    assert 'playground_run_latency_seconds_bucket{le="+Inf",pool="interpret"} 2.0' in text
    assert 'playground_workers_live{pool="interpret"} 3.0' in text
