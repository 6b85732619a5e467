-- sluice's schema, version 1. Every time is milliseconds since the epoch,
-- read from the server's clock (never SQL now()).

-- Message positions across all queues: FIFO sequence numbers and queue order.
CREATE SEQUENCE sluice_message_seq;

CREATE TABLE sluice_queues (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    config      JSONB NOT NULL,
    tags        JSONB NOT NULL,
    created_at  BIGINT NOT NULL,
    modified_at BIGINT NOT NULL,
    last_purge  BIGINT,
    -- A standard queue turns fair once a message carries a group id.
    fair        BOOLEAN NOT NULL DEFAULT FALSE
);

-- Every receive rewrites a row; a low fillfactor and eager autovacuum keep
-- the dead row versions of a busy queue from piling up (see docs/deploy.md).
CREATE TABLE sluice_messages (
    queue_id          BIGINT NOT NULL REFERENCES sluice_queues (id) ON DELETE CASCADE,
    seq               BIGINT NOT NULL,
    message_id        UUID NOT NULL,
    body              TEXT NOT NULL,
    attributes        JSONB NOT NULL,
    system_attributes JSONB NOT NULL,
    group_id          TEXT,
    dedup_id          TEXT,
    sent_at           BIGINT NOT NULL,
    enqueued_at       BIGINT NOT NULL,
    visible_at        BIGINT NOT NULL,
    receive_count     INTEGER NOT NULL DEFAULT 0,
    first_receive_at  BIGINT NOT NULL DEFAULT 0,
    last_receive_at   BIGINT NOT NULL DEFAULT 0,
    failure_reason    TEXT,
    PRIMARY KEY (queue_id, seq)
) WITH (
    fillfactor = 70,
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.02
);

-- Receives take the messages visible longest first.
CREATE INDEX sluice_messages_visible ON sluice_messages (queue_id, visible_at, seq);
-- Retention deletes the oldest first.
CREATE INDEX sluice_messages_age ON sluice_messages (queue_id, enqueued_at);

-- FIFO deduplication ids of the last five minutes (rule F2).
CREATE TABLE sluice_dedup (
    queue_id   BIGINT NOT NULL REFERENCES sluice_queues (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    message_id UUID NOT NULL,
    seq        BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (queue_id, key)
);
CREATE INDEX sluice_dedup_expiry ON sluice_dedup (expires_at);

-- FIFO receives by ReceiveRequestAttemptId, for retries (rule F4).
CREATE TABLE sluice_receive_attempts (
    queue_id   BIGINT NOT NULL REFERENCES sluice_queues (id) ON DELETE CASCADE,
    attempt_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    seqs       BIGINT[] NOT NULL,
    counts     INTEGER[] NOT NULL,
    PRIMARY KEY (queue_id, attempt_id)
);
CREATE INDEX sluice_receive_attempts_expiry ON sluice_receive_attempts (expires_at);

-- Message move task records (rule R7).
CREATE TABLE sluice_move_tasks (
    handle     TEXT PRIMARY KEY,
    record     JSONB NOT NULL,
    started_at BIGINT NOT NULL
);
