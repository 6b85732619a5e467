-- FIFO and fair receives walk a queue's groups (their heads and their
-- oldest receivable messages) through this index instead of reading the
-- queue's whole backlog; ungrouped messages of a fair queue sit under NULL.
CREATE INDEX sluice_messages_group ON sluice_messages (queue_id, group_id, seq);
