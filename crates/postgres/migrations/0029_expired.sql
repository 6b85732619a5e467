-- Messages past retention of queues that keep what expires (rule X8): the
-- statement that expires them moves them here, out of their queue and its
-- counts, and they are deleted once the archive holds them. The columns
-- are sluice_messages' that a message is read back with.
CREATE TABLE sluice_expired (
    queue_id          BIGINT NOT NULL,
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
    receive_count     INTEGER NOT NULL,
    first_receive_at  BIGINT NOT NULL,
    last_receive_at   BIGINT NOT NULL,
    failure_reason    TEXT,
    PRIMARY KEY (queue_id, seq)
);
