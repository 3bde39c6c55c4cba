-- Money: a double-entry ledger (append-only postings that sum to zero per
-- transaction), customers, charges and static QR codes, refunds.

CREATE TABLE ledger_transactions (
    id              TEXT PRIMARY KEY,
    company_id      TEXT NOT NULL REFERENCES companies(id),
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    -- PIX_IN, PIX_OUT, REFUND, DISPUTE_BLOCK, DISPUTE_RELEASE
    kind            TEXT NOT NULL,
    -- Centavos, always positive; the direction is in `kind` and in the postings.
    value           BIGINT NOT NULL CHECK (value > 0),
    end_to_end_id   TEXT NOT NULL UNIQUE,
    charge_id       TEXT,
    description     TEXT,
    -- For PIX_IN: the payer; for PIX_OUT: the destination key.
    counterparty    TEXT NOT NULL DEFAULT '{}',
    -- A refund or release points at the transaction it reverses.
    original_id     TEXT REFERENCES ledger_transactions(id),
    -- The client's correlationID (refunds, withdrawals).
    correlation_id  TEXT,
    created_at      BIGINT NOT NULL
);
CREATE INDEX ledger_transactions_account ON ledger_transactions(account_id, created_at);

-- Append-only: never updated, never deleted.
CREATE TABLE ledger_postings (
    transaction_id  TEXT NOT NULL REFERENCES ledger_transactions(id),
    -- `<accountId>:available`, `<accountId>:blocked`, or `world:pix` (the outside).
    ledger_account  TEXT NOT NULL,
    amount          BIGINT NOT NULL,
    PRIMARY KEY (transaction_id, ledger_account)
);
CREATE INDEX ledger_postings_account ON ledger_postings(ledger_account);

CREATE TABLE customers (
    id              TEXT PRIMARY KEY,
    company_id      TEXT NOT NULL REFERENCES companies(id),
    correlation_id  TEXT NOT NULL,
    name            TEXT NOT NULL,
    email           TEXT,
    phone           TEXT,
    tax_id          TEXT,
    address         TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    UNIQUE (company_id, correlation_id)
);

CREATE TABLE charges (
    id               TEXT PRIMARY KEY,
    company_id       TEXT NOT NULL REFERENCES companies(id),
    account_id       TEXT NOT NULL REFERENCES accounts(id),
    application_id   TEXT,
    correlation_id   TEXT NOT NULL,
    transaction_id   TEXT NOT NULL UNIQUE,
    value            BIGINT NOT NULL CHECK (value > 0),
    comment          TEXT,
    -- ACTIVE, COMPLETED, EXPIRED
    status           TEXT NOT NULL,
    pix_key          TEXT NOT NULL,
    br_code          TEXT NOT NULL,
    customer_id      TEXT REFERENCES customers(id),
    additional_info  TEXT NOT NULL DEFAULT '[]',
    expires_at       BIGINT NOT NULL,
    paid_at          BIGINT,
    payment_id       TEXT REFERENCES ledger_transactions(id),
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (company_id, correlation_id)
);
CREATE INDEX charges_company ON charges(company_id, created_at);
CREATE INDEX charges_expiry ON charges(status, expires_at);

CREATE TABLE static_qr_codes (
    id              TEXT PRIMARY KEY,
    company_id      TEXT NOT NULL REFERENCES companies(id),
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    correlation_id  TEXT NOT NULL,
    identifier      TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    value           BIGINT,
    comment         TEXT,
    pix_key         TEXT NOT NULL,
    br_code         TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    UNIQUE (company_id, correlation_id)
);
