-- When each queue name was last deleted: SQS refuses to create the name
-- again for 60 seconds (rule V19), on every node.
CREATE TABLE IF NOT EXISTS sluice_deleted_queues (
    name       TEXT PRIMARY KEY,
    deleted_at BIGINT NOT NULL
);
