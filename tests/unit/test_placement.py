"""Where a run ran is the host's word (`sandbox.results.placement`): its mode, its timing's label and the
device its versions name; the kernel's process may say what it likes in its own events."""

from __future__ import annotations

import platform

from sandbox.jobs.build import make_job
from sandbox.protocol import Versions
from sandbox.protocol.chips import CHIPS, chip_info
from sandbox.protocol.device_kinds import NATIVE_DEVICE_KINDS, device_kind_of
from sandbox.results import placement

# A CPU simulation of a v5e whose process claimed another chip's hardware.
CLAIMED = Versions("3.12", "0.12.0.1", "0.12.0.1", "0.0.50", "TPU v6 lite")


def test_a_simulated_run_names_the_simulated_chip_on_this_cpu_whatever_its_process_says():
    for chip in CHIPS:
        job = make_job("", chip=chip)
        found = placement.versions(CLAIMED, job, on_chip=False)
        assert found is not None
        assert (
            found.device_kind == f"{chip_info(chip).device_kind} (interpret mode on {platform.machine()} CPU)"
        )
        assert (found.python, found.jax, found.libtpu) == (CLAIMED.python, CLAIMED.jax, CLAIMED.libtpu)


def test_a_run_in_a_chip_slot_names_the_kind_the_hardware_reports():
    found = placement.versions(CLAIMED, make_job("", chip="v5e"), on_chip=True)
    assert found is not None and found.device_kind == "TPU v5 lite" == NATIVE_DEVICE_KINDS["v5e"][0]


def test_no_versions_stay_none_and_an_unknown_chip_keeps_what_was_said():
    assert placement.versions(None, make_job("", chip="v5e"), on_chip=False) is None
    assert device_kind_of("v99", on_chip=False) is None
