-- Every send and every receive of a plain standard queue wrote an entry
-- for its (ungrouped) message into the group index, which only FIFO and
-- fair receives read: a fifth of the database's work per message. The
-- index now holds grouped messages only. Fair receives still need every
-- message of a fair queue in it, so a fair queue's ungrouped messages
-- carry the empty group id, which no client can send (MessageGroupId is
-- 1 to 128 characters) and which the engine shows as no group at all.
UPDATE sluice_messages SET group_id = ''
WHERE group_id IS NULL AND queue_id IN (SELECT id FROM sluice_queues WHERE fair);
DROP INDEX sluice_messages_group;
CREATE INDEX sluice_messages_group ON sluice_messages (queue_id, group_id, seq)
    WHERE group_id IS NOT NULL;
