-- Secrets made once for the whole cluster: the key receipt handles are
-- sealed with (rule A3), so a handle one node gave out works on every node
-- and after every restart. The first node to ask inserts it; the others
-- read that row.
CREATE TABLE IF NOT EXISTS sluice_secrets (
    name  TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
