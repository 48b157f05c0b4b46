"""`/api/catalog`: the entries, and one entry with its template, solution and reference."""

from __future__ import annotations

from fastapi import APIRouter

from server import convert
from server.deps import CatalogDep
from server.problems import ProblemError, problem_responses
from server.wire.schemas import CatalogDetail, CatalogSummary

router = APIRouter(responses=problem_responses(404, 422), prefix="/api/catalog", tags=["catalog"])


@router.get("", response_model=list[CatalogSummary])
def list_entries(catalog: CatalogDep) -> list[CatalogSummary]:
    return [convert.catalog_summary(e) for e in catalog.entries]


@router.get("/{slug}", response_model=CatalogDetail)
def get_entry(slug: str, catalog: CatalogDep) -> CatalogDetail:
    entry = catalog.get(slug)
    if entry is None:
        raise ProblemError(404, "Unknown entry", f"entry {slug!r} is not in the catalog")
    return convert.catalog_detail(entry)
