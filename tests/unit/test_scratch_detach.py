"""A job's setup detaches every scratch mount it inherited; a neighbour's that vanished meanwhile
(its job ended, the pool removed it) is already what setup wants, not a failed setup."""

from __future__ import annotations

import errno

import pytest

from sandbox.jail import namespaces


def fake_mounts(monkeypatch, visible: list[list[str]], failing: dict[str, int]):
    calls = []

    def mounts_under(*roots):
        return visible.pop(0) if visible else []

    def umount(point):
        calls.append(point)
        if point in failing:
            raise OSError(failing[point], f"umount {point}")

    monkeypatch.setattr(namespaces, "_mounts_under", mounts_under)
    monkeypatch.setattr(namespaces, "umount", umount)
    return calls


@pytest.mark.parametrize("err", [errno.ENOENT, errno.EINVAL])
def test_a_neighbours_scratch_that_vanished_does_not_fail_setup(monkeypatch, err):
    calls = fake_mounts(monkeypatch, [["/s/mine", "/s/neighbour"], []], {"/s/neighbour": err})
    namespaces.detach_all("/s")
    assert calls == ["/s/mine", "/s/neighbour"]


def test_any_other_umount_failure_still_fails_setup(monkeypatch):
    fake_mounts(monkeypatch, [["/s/neighbour"]], {"/s/neighbour": errno.EPERM})
    with pytest.raises(PermissionError):
        namespaces.detach_all("/s")


def test_stacked_mounts_are_detached_round_by_round(monkeypatch):
    # Detach, not just cover: a covered mount would still show other jobs' names in mountinfo.
    calls = fake_mounts(monkeypatch, [["/s/a", "/c"], ["/c"], []], {})
    namespaces.detach_all("/s", "/c")
    assert calls == ["/s/a", "/c", "/c"]
