"""The kernel catalog: `kernels_catalog/catalog.toml` (order) plus one folder per entry.

Each folder holds `entry.toml` (metadata, cases, tolerances), `reference.py` (plain jnp:
`make_inputs(case)` and `reference(*inputs)`), `kernel.py` (the worked solution), `template.py`
(the exercise a learner starts from: the solution with `# TODO` holes, each a `todo()` call that
stops the run saying what is missing), `README.md` (shown in the UI) and `wrong/*.py` (known-wrong
kernels the checker must reject; what is wrong is told only by `entry.toml`'s `why`, never in the
file, so loading one spoils nothing). Loading validates everything and raises `CatalogError` naming the file and the field, so a malformed entry stops start-up.

Optional `entry.toml` fields: `devices` (default 1; more than one runs the job on that many
simulated devices with a one-axis device mesh `"x"` set as the current mesh, see `sandbox.harness.target`),
`mutable_inputs`, `[cost]` (`flops`, `bytes_accessed`), `interpret_notes`, and `[options]`: the
interpret-mode options the entry's jobs run with unless the caller chooses otherwise, with the
fields of `InterpretOptions` (`detect_races`, `uninitialized_memory`, `dma_execution_mode`,
`random_seed`). An entry about races declares `[options] detect_races = true`, so its racy
`wrong/` kernel is rejected by default (`sandbox.jobs.build.make_job` applies these defaults).

`[tune]` (optional) makes an entry sweepable ("Tune", `sandbox.jobs.sweeps`): `bind` maps each tunable
keyword argument of the entry point to the size dimension its block tiles (`{ bm = "m" }`),
`values` gives default value lists, `size` the default target size and `check` the correctness
size (grown per config to fit its blocks). Sizes are the `dims` of the entry's cases.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.protocol import (
    CHIPS,
    Case,
    Chip,
    EntrySpec,
    InterpretOptions,
    RunStatus,
    Tolerance,
    from_json_dict,
)

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "kernels_catalog"
LEVELS = ("beginner", "intermediate", "advanced")
REQUIRED_FILES = ("entry.toml", "reference.py", "kernel.py", "template.py", "README.md")


class CatalogError(Exception):
    """A malformed catalog entry; the message names the file and the field."""


@dataclass(frozen=True)
class WrongKernel:
    name: str
    source: str
    expect: RunStatus
    why: str


@dataclass(frozen=True)
class TuneSpec:
    """An entry's tunables: which keyword arguments to sweep over, and at which sizes."""

    bind: dict[str, str]
    values: dict[str, tuple[int, ...]]
    size: dict[str, int]
    check: dict[str, int]


@dataclass(frozen=True)
class CatalogEntry:
    slug: str
    title: str
    summary: str
    level: str
    concepts: tuple[str, ...]
    entry_point: str
    cases: tuple[Case, ...]
    tolerances: dict[str, Tolerance]
    devices: int
    mutable_inputs: tuple[int, ...]
    chips: tuple[Chip, ...]
    docs: str
    readme: str
    reference_source: str
    solution_source: str
    template_source: str
    wrong: tuple[WrongKernel, ...]
    flops: int | None = None
    bytes_accessed: int | None = None
    interpret_notes: str = ""
    options: InterpretOptions = field(default_factory=InterpretOptions)
    tune: TuneSpec | None = None

    def spec(self) -> EntrySpec:
        return EntrySpec(
            slug=self.slug,
            entry_point=self.entry_point,
            reference_source=self.reference_source,
            cases=self.cases,
            tolerances=self.tolerances,
            mutable_inputs=self.mutable_inputs,
            devices=self.devices,
            flops=self.flops,
            bytes_accessed=self.bytes_accessed,
        )


@dataclass(frozen=True)
class Catalog:
    entries: tuple[CatalogEntry, ...]

    def get(self, slug: str) -> CatalogEntry | None:
        return next((e for e in self.entries if e.slug == slug), None)

    @property
    def slugs(self) -> tuple[str, ...]:
        return tuple(e.slug for e in self.entries)


def load_catalog(root: Path = DEFAULT_ROOT) -> Catalog:
    index = root / "catalog.toml"
    order = _field(_read_toml(index), "entries", list, index)
    if len(set(order)) != len(order):
        raise CatalogError(f"{index}: field 'entries': slugs must be unique")
    return Catalog(tuple(load_entry(root / slug) for slug in order))


def load_entry(folder: Path) -> CatalogEntry:
    for name in REQUIRED_FILES:
        if not (folder / name).is_file():
            raise CatalogError(f"{folder / name}: missing (every entry needs {', '.join(REQUIRED_FILES)})")
    path = folder / "entry.toml"
    meta = _read_toml(path)
    slug = _field(meta, "slug", str, path)
    if slug != folder.name:
        raise CatalogError(f"{path}: field 'slug': {slug!r} must equal the folder name {folder.name!r}")
    level = _field(meta, "level", str, path)
    if level not in LEVELS:
        raise CatalogError(f"{path}: field 'level': {level!r} is not one of {LEVELS}")
    chips = tuple(_field(meta, "chips", list, path))
    if not chips or any(c not in CHIPS for c in chips):
        raise CatalogError(f"{path}: field 'chips': {chips!r} must be a non-empty subset of {CHIPS}")
    cost = meta.get("cost", {})
    return CatalogEntry(
        slug=slug,
        title=_field(meta, "title", str, path),
        summary=_field(meta, "summary", str, path),
        level=level,
        concepts=tuple(_field(meta, "concepts", list, path)),
        entry_point=_field(meta, "entry_point", str, path),
        cases=_cases(meta, path),
        tolerances=_tolerances(meta, path),
        devices=int(meta.get("devices", 1)),
        mutable_inputs=tuple(meta.get("mutable_inputs", ())),
        chips=chips,  # type: ignore[arg-type]
        docs=_field(meta, "docs", str, path),
        readme=(folder / "README.md").read_text(),
        reference_source=(folder / "reference.py").read_text(),
        solution_source=(folder / "kernel.py").read_text(),
        template_source=(folder / "template.py").read_text(),
        wrong=_wrong(folder, meta, path),
        flops=cost.get("flops"),
        bytes_accessed=cost.get("bytes_accessed"),
        interpret_notes=str(meta.get("interpret_notes", "")),
        options=_options(meta, path),
        tune=_tune(meta, path),
    )


def _tune(meta: dict[str, Any], path: Path) -> TuneSpec | None:
    raw = meta.get("tune")
    if raw is None:
        return None
    try:
        bind = {str(k): str(v) for k, v in raw["bind"].items()}
        values = {str(k): tuple(int(x) for x in v) for k, v in raw["values"].items()}
        size = {str(k): int(v) for k, v in raw["size"].items()}
        check = {str(k): int(v) for k, v in raw["check"].items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CatalogError(
            f"{path}: field 'tune': needs bind, values, size and check tables ({exc})"
        ) from None
    if set(values) != set(bind) or not set(bind.values()) <= set(size) or set(check) != set(size):
        raise CatalogError(
            f"{path}: field 'tune': bind and values must name the same parameters, bound to size dims"
        )
    return TuneSpec(bind=bind, values=values, size=size, check=check)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise CatalogError(f"{path}: missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: invalid TOML: {exc}") from None


def _field(meta: dict[str, Any], name: str, kind: type, path: Path) -> Any:
    if name not in meta:
        raise CatalogError(f"{path}: field {name!r} is required")
    value = meta[name]
    if not isinstance(value, kind) or (isinstance(value, str) and not value.strip()):
        raise CatalogError(f"{path}: field {name!r} must be a non-empty {kind.__name__}")
    return value


def _cases(meta: dict[str, Any], path: Path) -> tuple[Case, ...]:
    raw = _field(meta, "cases", list, path)
    cases = []
    for i, item in enumerate(raw):
        try:
            cases.append(
                Case(
                    name=item["name"],
                    dtype=item["dtype"],
                    seed=int(item.get("seed", 0)),
                    dims={k: int(v) for k, v in item.get("dims", {}).items()},
                    tpu_only=bool(item.get("tpu_only", False)),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CatalogError(f"{path}: field 'cases[{i}]': needs name, dtype, seed, dims ({exc})") from None
    if not any(not c.tpu_only for c in cases):
        raise CatalogError(f"{path}: field 'cases': at least one case must run in interpret mode")
    if not any(c.tpu_only for c in cases):
        raise CatalogError(f"{path}: field 'cases': declare a realistic TPU-sized case (tpu_only = true)")
    return tuple(cases)


def _tolerances(meta: dict[str, Any], path: Path) -> dict[str, Tolerance]:
    try:
        return {
            dtype: Tolerance(rtol=float(t["rtol"]), atol=float(t["atol"]))
            for dtype, t in meta.get("tolerances", {}).items()
        }
    except (KeyError, TypeError, ValueError):
        raise CatalogError(f"{path}: field 'tolerances': each dtype needs rtol and atol") from None


def _options(meta: dict[str, Any], path: Path) -> InterpretOptions:
    raw = meta.get("options", {})
    if not isinstance(raw, dict):
        raise CatalogError(f"{path}: field 'options' must be a table of interpret options")
    known = {f.name: f.default for f in dataclasses.fields(InterpretOptions)}
    for name, value in raw.items():
        kind = int if name == "random_seed" else type(known.get(name))
        if name in known and type(value) is not kind:
            raise CatalogError(f"{path}: field 'options.{name}' must be a {kind.__name__}")
    try:
        return from_json_dict(InterpretOptions, raw)
    except (ValueError, TypeError) as exc:
        raise CatalogError(f"{path}: field 'options': {exc}") from None


def _wrong(folder: Path, meta: dict[str, Any], path: Path) -> tuple[WrongKernel, ...]:
    declared = meta.get("wrong", {})
    files = sorted((folder / "wrong").glob("*.py"))
    if not files:
        raise CatalogError(f"{folder / 'wrong'}: at least one known-wrong kernel is required")
    kernels = []
    for file in files:
        info = declared.get(file.stem, {})
        try:
            expect = RunStatus(info.get("expect", RunStatus.MISMATCH))
        except ValueError:
            raise CatalogError(f"{path}: field 'wrong.{file.stem}.expect': unknown status") from None
        why = info.get("why", "")
        if not why:
            raise CatalogError(f"{path}: field 'wrong.{file.stem}.why' is required (what is wrong and why)")
        kernels.append(WrongKernel(file.stem, file.read_text(), expect, why))
    unknown = set(declared) - {f.stem for f in files}
    if unknown:
        raise CatalogError(f"{path}: field 'wrong': no file for {sorted(unknown)}")
    return tuple(kernels)
