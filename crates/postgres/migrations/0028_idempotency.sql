-- Consumers' idempotency records (rule I1), by key (the account's id, '/',
-- the caller's key). result is NULL while the key is claimed and in
-- progress; times are milliseconds since the Unix epoch. The sweep deletes
-- expired rows.
CREATE TABLE sluice_idempotency (
    key               TEXT PRIMARY KEY,
    result            TEXT,
    in_progress_until BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    ttl_ms            BIGINT NOT NULL
);
CREATE INDEX sluice_idempotency_expiry ON sluice_idempotency (expires_at);
