-- Per-AppID request buckets shared by every `cofre` process on one database (see
-- store::rate_buckets). One row per key; `admitted` says whether the last take got
-- a token, so one statement both refills, takes and answers.

CREATE TABLE rate_buckets (
    key          TEXT PRIMARY KEY,
    millitokens  BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    admitted     BIGINT NOT NULL
);
