-- Encryption at rest: the data keys that seal messages of queues with
-- server-side encryption, each wrapped by a key of the operator's keyring
-- (JSON of sluice_keyring::DataKeyRecord). Shared by every node; a node
-- meeting a message sealed by a data key another node made reads it here.
CREATE TABLE sluice_data_keys (
    id       BIGINT PRIMARY KEY,
    queue_id BIGINT NOT NULL,
    record   JSONB NOT NULL
);
CREATE INDEX sluice_data_keys_queue ON sluice_data_keys (queue_id);
