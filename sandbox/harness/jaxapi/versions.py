"""The one table of the JAX versions the playground runs (its runtimes, `runtimes/*.txt`), and what each
needs from the adapter.

The harness is written for the newest runtime (`PINNED`). Its hooks into JAX's internals (the
interpreter monitor, the kernel trace, the interpret-mode fixes that extend the simulator) are written
against that version's `jax._src` and are applied on it alone; on any other version they say why not
in the words a user reads (`pinned`). The rest of a row says what an older interpreter lacks, so the
adapter bridges it:

- `internals`: the version's `jax._src` is the one the hooks are written for (`PINNED`'s).
- `prints_races`: its `InterpretParams` has no `on_race`; the race detector `print`s each report to the
  user's stdout, and `interpret.route_race_reports` turns those prints into log records, as `on_race=
  "warn"` does on the newer versions (`checks.races.RaceLog` reads both alike).
- `chip_arithmetic`: the fixes that give the chip's arithmetic (`fixes/mxu.py`, `fixes/approx.py`) apply:
  its interpreter takes the arguments they wrap (checked again when they are installed).

A version not in the table gets what an unknown version can be given: none of the pinned hooks, and
the bridges that find what they need by looking (the arithmetic fixes, the race routing). The table is
checked against `runtimes/*.txt` by `tests/unit/test_jax_versions.py` and against each installed
runtime's real JAX by `tests/runtimes/test_jax_versions_on_runtimes.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

# The version the adapter's hooks into JAX's internals are written against (monitor, trace, fixes).
PINNED = "0.12.0.1"


@dataclass(frozen=True)
class JaxVersion:
    """What one JAX version needs from the adapter."""

    version: str
    internals: bool  # its jax._src is PINNED's: the monitor, the trace and every fix apply
    prints_races: bool  # InterpretParams lacks `on_race`: race reports are printed, and routed to logs
    chip_arithmetic: bool = True  # the MXU-pass and approximate-reciprocal fixes apply


SUPPORTED: tuple[JaxVersion, ...] = (
    JaxVersion("0.10.2", internals=False, prints_races=True),
    JaxVersion("0.11.2", internals=False, prints_races=True),
    JaxVersion(PINNED, internals=True, prints_races=False),
)


def support(version: str) -> JaxVersion:
    """The table's row for `version`; an unknown version gets none of the pinned hooks."""
    for row in SUPPORTED:
        if row.version == version:
            return row
    return JaxVersion(version, internals=False, prints_races=False)


def not_available(jax_version: str, what: str = "") -> str:
    """The one phrase for a missing feature: "not available on jax 0.10.2" (and why, if given)."""
    return f"not available on jax {jax_version}" + (f" ({what})" if what else "")


def pinned(jax_version: str, feature: str) -> str:
    """Why a hook written against `PINNED`'s internals is off on `jax_version` ("" where it applies)."""
    if support(jax_version).internals:
        return ""
    return not_available(
        jax_version, f"the playground's {feature} hooks are written for jax {PINNED}'s internals"
    )
