-- Events: webhook registrations, the transactional outbox (events written in the same
-- transaction as the change that caused them), one delivery per event and webhook with
-- every attempt recorded, and the RSA keys that sign deliveries.

CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    company_id      TEXT NOT NULL REFERENCES companies(id),
    -- The application whose charges the payload names (optional link).
    application_id  TEXT REFERENCES applications(id),
    name            TEXT NOT NULL,
    event           TEXT NOT NULL,
    url             TEXT NOT NULL,
    authorization_header TEXT,
    -- JSON object of extra headers.
    headers         TEXT NOT NULL DEFAULT '{}',
    is_active       BOOLEAN NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    -- Deleted webhooks stay for their delivery history but receive nothing.
    deleted_at      BIGINT
);
CREATE INDEX webhooks_company_event ON webhooks(company_id, event);

CREATE TABLE events (
    id              TEXT PRIMARY KEY,
    company_id      TEXT NOT NULL REFERENCES companies(id),
    application_id  TEXT,
    event           TEXT NOT NULL,
    payload         TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX events_company ON events(company_id, created_at);

CREATE TABLE deliveries (
    id               TEXT PRIMARY KEY,
    event_id         TEXT NOT NULL REFERENCES events(id),
    webhook_id       TEXT NOT NULL REFERENCES webhooks(id),
    company_id       TEXT NOT NULL REFERENCES companies(id),
    -- PENDING, DELIVERED, FAILED (gave up after the last attempt), CANCELED
    status           TEXT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    -- A worker owns the delivery until then; another may take it over afterwards.
    claimed_until    BIGINT,
    created_at       BIGINT NOT NULL,
    delivered_at     BIGINT
);
CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
CREATE INDEX deliveries_webhook ON deliveries(webhook_id, created_at);

CREATE TABLE delivery_attempts (
    delivery_id      TEXT NOT NULL REFERENCES deliveries(id),
    attempt          BIGINT NOT NULL,
    status_code      BIGINT,
    latency_ms       BIGINT NOT NULL,
    error            TEXT,
    attempted_at     BIGINT NOT NULL,
    next_resend_at   BIGINT,
    PRIMARY KEY (delivery_id, attempt)
);

CREATE TABLE webhook_keys (
    -- SHA-256 of the DER public key, hex.
    key_identifier   TEXT PRIMARY KEY,
    private_key_pem  TEXT NOT NULL,
    public_key_pem   TEXT NOT NULL,
    is_current       BOOLEAN NOT NULL,
    created_at       BIGINT NOT NULL
);
CREATE UNIQUE INDEX webhook_keys_one_current ON webhook_keys(is_current) WHERE is_current;
