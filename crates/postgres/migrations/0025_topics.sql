-- SNS topics and their subscriptions (rule N1): records the server reads
-- and changes whole (`record`, a topic or a subscription as serialised by
-- sluice-broker), beside the columns the engine needs: a subscription's
-- topic (deleted with it), its protocol and endpoint (one subscription per
-- endpoint of a topic, however many nodes subscribe it at once) and its
-- creation time (listings are oldest first, ties by id). Keys and ids sort
-- bytewise ("C"), as every engine lists them.
CREATE TABLE IF NOT EXISTS sluice_topics (
    key    TEXT COLLATE "C" PRIMARY KEY,
    record JSONB NOT NULL
);

CREATE TABLE IF NOT EXISTS sluice_subscriptions (
    id         TEXT COLLATE "C" PRIMARY KEY,
    topic      TEXT COLLATE "C" NOT NULL REFERENCES sluice_topics (key) ON DELETE CASCADE,
    protocol   TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    record     JSONB NOT NULL,
    UNIQUE (topic, protocol, endpoint)
);

-- A topic's subscriptions in listing order: what every publish reads.
CREATE INDEX IF NOT EXISTS sluice_subscriptions_by_topic
    ON sluice_subscriptions (topic, created_at, id);
