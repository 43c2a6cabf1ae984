-- The state database as the release before prompt-cache pricing leaves it: each owner's table
-- made by the very statements that release ran (config history, API keys, the usage ledger), a
-- few rows in each, the write-ahead log on as every connection of it sets. previous_release.db
-- is this script run once into a new file and kept, so the migration test opens the bytes an
-- older gateway wrote rather than a file today's code made:
--   sqlite3 previous_release.db < previous_release.sql
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;

BEGIN;
CREATE TABLE IF NOT EXISTS config_versions ( number INTEGER PRIMARY KEY, created_ms INTEGER NOT NULL, source TEXT NOT NULL, author TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '', text TEXT NOT NULL, diff TEXT NOT NULL DEFAULT '');
COMMIT;

BEGIN;
CREATE TABLE IF NOT EXISTS api_keys (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, sha256_hex TEXT NOT NULL UNIQUE, requests_per_minute INTEGER NOT NULL DEFAULT 0, tokens_per_minute INTEGER NOT NULL DEFAULT 0, models TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL);
COMMIT;

BEGIN;
CREATE TABLE IF NOT EXISTS usage_ledger ( id INTEGER PRIMARY KEY, finished_at_ms INTEGER NOT NULL, request_id TEXT NOT NULL, tenant TEXT NOT NULL, key_id TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, route TEXT NOT NULL, tier TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, tokens_estimated INTEGER NOT NULL, cost_usd REAL NOT NULL, priced INTEGER NOT NULL, status INTEGER NOT NULL, latency_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS usage_ledger_time ON usage_ledger(finished_at_ms);
CREATE INDEX IF NOT EXISTS usage_ledger_tenant ON usage_ledger(tenant, finished_at_ms);
CREATE INDEX IF NOT EXISTS usage_ledger_model ON usage_ledger(model, finished_at_ms);
CREATE INDEX IF NOT EXISTS usage_ledger_key ON usage_ledger(key_id, finished_at_ms);
COMMIT;

INSERT INTO config_versions (number, created_ms, source, author, note, text, diff) VALUES (1, 1796032000000, 'start', '', '', 'providers:
  - id: cloud
    kind: openai
    base_url: https://api.example.com/v1
    models: [gpt-4o]
pricing:
  models:
    gpt-4o: {input_per_million: 2.5, output_per_million: 10}
', '');

INSERT INTO api_keys (id, tenant, sha256_hex, requests_per_minute, tokens_per_minute, models, created_at) VALUES ('ci-runner', 'checkout', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 0, 0, '[]', '2026-11-30T09:00:00Z');

-- gpt-4o at $2.50 / $10 per million: 1,200 in and 300 out cost $0.006; an estimated 800 in,
-- $0.002; a failed call to an unpriced local model, nothing.
BEGIN;
INSERT INTO usage_ledger (finished_at_ms, request_id, tenant, key_id, model, provider, route, tier, input_tokens, output_tokens, tokens_estimated, cost_usd, priced, status, latency_ms) VALUES (1796032800000, 'req-old-1', 'checkout', 'ci-runner', 'gpt-4o', 'cloud', '', 'pro', 1200, 300, 0, 0.006, 1, 200, 850);
INSERT INTO usage_ledger (finished_at_ms, request_id, tenant, key_id, model, provider, route, tier, input_tokens, output_tokens, tokens_estimated, cost_usd, priced, status, latency_ms) VALUES (1796033100000, 'req-old-2', 'checkout', '', 'gpt-4o', 'cloud', '', 'pro', 800, 0, 1, 0.002, 1, 200, 400);
INSERT INTO usage_ledger (finished_at_ms, request_id, tenant, key_id, model, provider, route, tier, input_tokens, output_tokens, tokens_estimated, cost_usd, priced, status, latency_ms) VALUES (1796036400000, 'req-old-3', 'search', '', 'local', 'local', 'sensitive', 'light', 0, 0, 0, 0.0, 0, 502, 120);
COMMIT;
