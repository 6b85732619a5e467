-- Receives take the messages visible longest first and, among those
-- visible since the same moment, the ones sent to the back (rule V12)
-- last: the index now holds that whole order, so a receive reads only
-- the rows it takes instead of sorting every row visible since the same
-- millisecond.
DROP INDEX sluice_messages_visible;
CREATE INDEX sluice_messages_visible ON sluice_messages (queue_id, visible_at, back, seq);

-- A queue's table empties and fills again all day: vacuum must not take
-- the exclusive lock that gives its empty tail pages back to the system,
-- which stops every send and receive while it waits for and holds it.
ALTER TABLE sluice_messages SET (vacuum_truncate = off);
