-- Subscriptions and their instalments. An instalment row exists once its charge was
-- issued (on its generation day, or by the payment book); the schedule itself is
-- computed from the subscription.

CREATE TABLE subscriptions (
    id                   TEXT PRIMARY KEY,
    company_id           TEXT NOT NULL REFERENCES companies(id),
    account_id           TEXT NOT NULL REFERENCES accounts(id),
    application_id       TEXT,
    correlation_id       TEXT NOT NULL,
    value                BIGINT NOT NULL CHECK (value > 0),
    -- JSON: {name, taxID, email, phone}
    customer             TEXT NOT NULL,
    frequency            TEXT NOT NULL,
    day_generate_charge  BIGINT NOT NULL,
    day_due              BIGINT NOT NULL,
    kind                 TEXT NOT NULL,
    charge_type          TEXT NOT NULL,
    -- ACTIVE, CANCELED
    status               TEXT NOT NULL,
    -- YYYY-MM-DD in Brasília time: the schedule starts on or after it.
    start_date           TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    canceled_at          BIGINT,
    UNIQUE (company_id, correlation_id)
);
CREATE INDEX subscriptions_company ON subscriptions(company_id, created_at);
CREATE INDEX subscriptions_status ON subscriptions(status);

CREATE TABLE subscription_instalments (
    subscription_id   TEXT NOT NULL REFERENCES subscriptions(id),
    number            BIGINT NOT NULL,
    charge_id         TEXT NOT NULL REFERENCES charges(id),
    generation_date   TEXT NOT NULL,
    due_date          TEXT NOT NULL,
    -- BOLETO only: the 44-digit barcode and the 47-digit typed line.
    boleto_barcode    TEXT,
    boleto_line       TEXT,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (subscription_id, number)
);
