-- The campaign flow: Cofre's own Pix keys, each company's registered withdraw keys and
-- the account's selected one, the directory lookup token buckets, balances, and the
-- correlationID idempotency of creates.

CREATE TABLE pix_keys (
    key          TEXT PRIMARY KEY,
    type         TEXT NOT NULL,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    company_id   TEXT NOT NULL REFERENCES companies(id),
    is_default   BOOLEAN NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX pix_keys_account ON pix_keys(account_id, created_at);
-- The key charges use: at most one per account.
CREATE UNIQUE INDEX pix_keys_one_default ON pix_keys(account_id) WHERE is_default;

CREATE TABLE withdraw_keys (
    id             TEXT PRIMARY KEY,
    company_id     TEXT NOT NULL REFERENCES companies(id),
    key            TEXT NOT NULL,
    type           TEXT NOT NULL,
    holder_name    TEXT NOT NULL,
    holder_tax_id  TEXT NOT NULL,
    ispb           TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    UNIQUE (company_id, key)
);

ALTER TABLE accounts ADD COLUMN withdraw_key_id TEXT REFERENCES withdraw_keys(id);

-- Directory lookup tokens per account holder (tax id), in thousandths of a token.
CREATE TABLE dict_buckets (
    holder_tax_id  TEXT PRIMARY KEY,
    millitokens    BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

-- Cached balance of each account, in centavos; changed only with its ledger postings.
CREATE TABLE account_balances (
    account_id  TEXT PRIMARY KEY REFERENCES accounts(id),
    available   BIGINT NOT NULL DEFAULT 0,
    blocked     BIGINT NOT NULL DEFAULT 0,
    CHECK (available >= 0),
    CHECK (blocked >= 0)
);

-- correlationID of every create: the same id and body give back the same resource.
CREATE TABLE idempotency_keys (
    company_id      TEXT NOT NULL REFERENCES companies(id),
    resource        TEXT NOT NULL,
    correlation_id  TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    resource_id     TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (company_id, resource, correlation_id)
);
