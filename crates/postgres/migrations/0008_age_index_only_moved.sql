-- Retention deletes a queue's expired messages oldest first. A message
-- gets its seq when it is stored, so a queue's messages stored by sends
-- expire in seq order and the primary key finds them; only messages moved
-- in with the enqueue time they had in their first queue (rule R3: a
-- standard queue's dead-letter queue keeps it) break that order. The age
-- index now holds those alone, instead of every message, whose entry every
-- send and every receive wrote.
ALTER TABLE sluice_messages ADD COLUMN moved BOOLEAN NOT NULL DEFAULT FALSE;
-- Which stored messages were moved is not recorded; every moved message
-- was received first, so these include them all.
UPDATE sluice_messages SET moved = TRUE WHERE receive_count > 0;
DROP INDEX sluice_messages_age;
CREATE INDEX sluice_messages_age ON sluice_messages (queue_id, enqueued_at) WHERE moved;
