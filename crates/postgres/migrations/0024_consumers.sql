-- Push consumers created at run time (rule C9): kept here so that every
-- node runs them and they outlive every node. The server writes and reads
-- the definition; the engine does not look inside.
CREATE TABLE IF NOT EXISTS sluice_consumers (
    name       TEXT PRIMARY KEY,
    definition JSONB NOT NULL
);

-- Leased delivery slots (rule C14): a node holds one row per batch it is
-- receiving or delivering, so a consumer's max_concurrency holds across
-- every node. A row whose lease ended (its node died) is free to claim.
CREATE TABLE IF NOT EXISTS sluice_consumer_slots (
    consumer   TEXT NOT NULL,
    slot       INTEGER NOT NULL,
    token      TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (consumer, slot)
);
