"""Shares and lessons and the databases that hold them: SQLite (the embedded default) and
PostgreSQL behind one contract (`tests/scale/test_store_contract.py`), chosen in `choice`."""
