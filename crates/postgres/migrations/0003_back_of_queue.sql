-- Rule V12: in a standard queue whose maxReceiveCount is above 3, a message
-- received 3 or more times goes to the back of the queue: among messages
-- visible since the same moment it comes last, and the oldest-message age
-- leaves it out.
ALTER TABLE sluice_messages ADD COLUMN back BOOLEAN NOT NULL DEFAULT FALSE;
