"""Collective: a TensorCore program that copies to other devices (remote DMAs over ICI). Not validated."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "collective (remote DMAs over ICI)"


def _matches(t: Traits) -> bool:
    return t.form == "program" and t.remote


FAMILY = Family(NAME, _matches)
