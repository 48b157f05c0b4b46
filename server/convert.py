"""Explicit conversions between wire types (`server.wire.schemas`) and sandbox domain types."""

from __future__ import annotations

from typing import Any

from sandbox.catalog.entries import CatalogEntry
from sandbox.protocol import InterpretOptions, Limits, to_json_dict
from server.settings import Settings
from server.wire.schemas import CatalogDetail, CatalogSummary, RunOptions, WrongKernelOut


def interpret_options(options: RunOptions, defaults: InterpretOptions | None = None) -> InterpretOptions:
    """The request's options over the entry's defaults: a field left out (null) keeps the default."""
    base = to_json_dict(defaults or InterpretOptions())
    chosen = {k: v for k, v in options.model_dump().items() if v is not None}
    return InterpretOptions(**{**base, **chosen})


def limits(settings: Settings) -> Limits:
    from sandbox.limits import default_limits

    return default_limits(
        wall_seconds=settings.wall_seconds,
        cpu_seconds=settings.cpu_seconds,
        memory_bytes=settings.memory_bytes,
        output_bytes=settings.output_bytes,
        source_bytes=settings.source_bytes,
    )


def catalog_summary(entry: CatalogEntry) -> CatalogSummary:
    return CatalogSummary(
        slug=entry.slug,
        title=entry.title,
        summary=entry.summary,
        level=entry.level,
        concepts=list(entry.concepts),
        chips=list(entry.chips),
        devices=entry.devices,
        docs=entry.docs,
    )


def catalog_detail(entry: CatalogEntry) -> CatalogDetail:
    cases: list[dict[str, Any]] = [to_json_dict(c) for c in entry.cases]
    return CatalogDetail(
        **catalog_summary(entry).model_dump(),
        entry_point=entry.entry_point,
        readme=entry.readme,
        template=entry.template_source,
        solution=entry.solution_source,
        reference=entry.reference_source,
        cases=cases,
        tolerances={k: to_json_dict(v) for k, v in entry.tolerances.items()},
        mutable_inputs=list(entry.mutable_inputs),
        interpret_notes=entry.interpret_notes,
        options=RunOptions(**to_json_dict(entry.options)),
        wrong=[
            WrongKernelOut(name=w.name, expect=w.expect.value, why=w.why, source=w.source)
            for w in entry.wrong
        ],
        tune=to_json_dict(entry.tune) if entry.tune is not None else None,
    )
