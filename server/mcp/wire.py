"""Input types of the MCP tools that have no HTTP request body of their own (the others take the API's
wire types as they are): a catalog query, an entry's slug, a run's id."""

from __future__ import annotations

from pydantic import Field

from server.wire.schemas import Wire


class CatalogQuery(Wire):
    level: str | None = Field(
        None, max_length=40, description="Only entries of this level (e.g. `beginner`)."
    )
    concept: str | None = Field(
        None, max_length=80, description="Only entries that teach this concept (e.g. `scalar prefetch`)."
    )


class EntryRef(Wire):
    slug: str = Field(..., max_length=100, description="A catalog entry's slug (`list_catalog`).")


class RunRef(Wire):
    run_id: str = Field(..., max_length=64, description="A run's id, as `run_kernel` returned it.")
