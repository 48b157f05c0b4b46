"""Wire types: the JSON the HTTP API accepts and returns (pydantic, strict about unknown fields)."""
