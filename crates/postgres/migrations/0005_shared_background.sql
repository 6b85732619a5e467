-- Background work shared by every node.

-- Alarms: every node shows the same ones; the node evaluating them saves
-- each state change here (compare-and-set on state and updated_at, so a
-- change is saved, and notified, once).
CREATE TABLE sluice_alarms (
    name       TEXT PRIMARY KEY,
    source     TEXT NOT NULL,
    definition JSONB NOT NULL,
    state      TEXT NOT NULL,
    reason     TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    history    JSONB NOT NULL
);

-- Activity counters of all nodes: each node adds what it counted since its
-- last flush, so the totals only grow and alarms on counters see the whole
-- cluster's activity.
CREATE TABLE sluice_activity (
    queue_id       BIGINT PRIMARY KEY REFERENCES sluice_queues (id) ON DELETE CASCADE,
    sent           BIGINT NOT NULL DEFAULT 0,
    sent_bytes     BIGINT NOT NULL DEFAULT 0,
    received       BIGINT NOT NULL DEFAULT 0,
    deleted        BIGINT NOT NULL DEFAULT 0,
    empty_receives BIGINT NOT NULL DEFAULT 0,
    dead_lettered  BIGINT NOT NULL DEFAULT 0,
    redriven       BIGINT NOT NULL DEFAULT 0,
    expired        BIGINT NOT NULL DEFAULT 0
);

-- One active move task per source queue (rule R7), whichever node starts
-- it. Two nodes may already have started two: all but the newest fail.
UPDATE sluice_move_tasks t
SET record = t.record
    || jsonb_build_object(
        'status', 'FAILED',
        'failure_reason', 'Another task on the same source queue was running; only one active task is allowed per source queue.')
WHERE t.record->>'status' IN ('RUNNING', 'CANCELLING')
  AND EXISTS (
    SELECT 1 FROM sluice_move_tasks n
    WHERE n.record->>'source_arn' = t.record->>'source_arn'
      AND n.record->>'status' IN ('RUNNING', 'CANCELLING')
      AND (n.started_at, n.handle) > (t.started_at, t.handle));
CREATE UNIQUE INDEX sluice_move_tasks_one_active
    ON sluice_move_tasks ((record->>'source_arn'))
    WHERE record->>'status' IN ('RUNNING', 'CANCELLING');
