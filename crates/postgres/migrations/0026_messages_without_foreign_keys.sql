-- Messages and FIFO deduplication rows no longer reference their queue's
-- row: the foreign key ran a trigger and a lookup of the queue row for
-- every message stored. Every insert now holds the queue's row FOR SHARE
-- itself (so a queue deleted meanwhile stores nothing), and DeleteQueue
-- deletes the queue's rows in its own transaction, as the cascade did.
ALTER TABLE sluice_messages DROP CONSTRAINT sluice_messages_queue_id_fkey;
ALTER TABLE sluice_dedup DROP CONSTRAINT sluice_dedup_queue_id_fkey;
