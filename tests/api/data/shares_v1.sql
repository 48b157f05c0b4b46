-- A share database written by the share store at schema version 1 (before lessons), dumped
-- with sqlite3's iterdump: tests/api/test_store_schema.py checks it still opens and reads.
PRAGMA user_version = 1;
BEGIN TRANSACTION;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('salt','3a4d1025243c7dd8ceb2c9a012a40694');
CREATE TABLE shares (id TEXT PRIMARY KEY, created REAL NOT NULL, record TEXT NOT NULL);
INSERT INTO "shares" VALUES('eHZVQ8igrzg',1.7962847579708697796e+09,'{"chip":"v6e","entry":"tiled_matmul","options":{"detect_races":true,"dma_execution_mode":null,"random_seed":null,"uninitialized_memory":"nan"},"source":"def matmul(x, y):\n    return x @ y\n","versions":{"jax":"0.12.0.1","jaxlib":"0.12.0.1","libtpu":null,"python":"3.12.3"}}');
INSERT INTO "shares" VALUES('DQjGxqogAEg',1.7962847579710564613e+09,'{"chip":"v5p","entry":null,"options":{"detect_races":null,"dma_execution_mode":null,"random_seed":7,"uninitialized_memory":null},"source":"print(''héllo'')\n","versions":{"jax":"0.12.0.1","jaxlib":"0.12.0.1","libtpu":null,"python":"3.12.3"}}');
COMMIT;
