-- Files, disputes with their evidence, and KYC onboarding.

-- Secrets the platform generates once and every process shares (the key that signs
-- file download links). Never updated.
CREATE TABLE platform_secrets (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- An uploaded file. Its bytes live in the object store under `<company_id>/<id>`;
-- this row is written only after the bytes are stored.
CREATE TABLE files (
    id              TEXT PRIMARY KEY,
    company_id      TEXT NOT NULL REFERENCES companies(id),
    purpose         TEXT NOT NULL,
    name            TEXT NOT NULL,
    content_type    TEXT NOT NULL,
    size            BIGINT NOT NULL,
    sha256          TEXT NOT NULL,
    correlation_id  TEXT,
    created_at      BIGINT NOT NULL
);
CREATE INDEX files_company ON files(company_id, created_at);

-- A dispute (MED) on a received Pix: the value is blocked while IN_REVIEW, then
-- released (REJECTED, CANCELED) or debited (ACCEPTED). One dispute per Pix.
CREATE TABLE disputes (
    id                 TEXT PRIMARY KEY,
    company_id         TEXT NOT NULL REFERENCES companies(id),
    account_id         TEXT NOT NULL REFERENCES accounts(id),
    transaction_id     TEXT NOT NULL UNIQUE REFERENCES ledger_transactions(id),
    block_id           TEXT NOT NULL REFERENCES ledger_transactions(id),
    resolution_id      TEXT REFERENCES ledger_transactions(id),
    value              BIGINT NOT NULL,
    status             TEXT NOT NULL,
    reason             TEXT NOT NULL,
    opened_by          TEXT NOT NULL,
    resolution_note    TEXT,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    closed_at          BIGINT
);
CREATE INDEX disputes_company ON disputes(company_id, created_at);
CREATE INDEX disputes_account ON disputes(account_id, created_at);

-- Evidence sent by the receiver: a link or an uploaded DISPUTE_EVIDENCE file.
CREATE TABLE dispute_evidence (
    id            TEXT PRIMARY KEY,
    dispute_id    TEXT NOT NULL REFERENCES disputes(id),
    position      BIGINT NOT NULL,
    url           TEXT,
    file_id       TEXT REFERENCES files(id),
    description   TEXT,
    created_at    BIGINT NOT NULL,
    CHECK ((url IS NULL) <> (file_id IS NULL))
);
CREATE INDEX dispute_evidence_dispute ON dispute_evidence(dispute_id, position);

-- A KYC onboarding submitted by a company's MASTER application, addressed by its
-- correlationID; reviewed by support.
CREATE TABLE kyc_onboardings (
    id               TEXT PRIMARY KEY,
    company_id       TEXT NOT NULL REFERENCES companies(id),
    correlation_id   TEXT NOT NULL,
    tax_id           TEXT NOT NULL,
    status           TEXT NOT NULL,
    review_note      TEXT,
    reviewed_by      TEXT,
    submissions      BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (company_id, correlation_id)
);
CREATE INDEX kyc_onboardings_status ON kyc_onboardings(status, updated_at);

CREATE TABLE kyc_representatives (
    id               TEXT PRIMARY KEY,
    onboarding_id    TEXT NOT NULL REFERENCES kyc_onboardings(id),
    position         BIGINT NOT NULL,
    name             TEXT NOT NULL,
    tax_id           TEXT NOT NULL,
    email            TEXT NOT NULL,
    birth_date       TEXT NOT NULL,
    -- JSON array of KYC_DOCUMENT file ids, in the order sent.
    documents        TEXT NOT NULL
);
CREATE INDEX kyc_representatives_onboarding ON kyc_representatives(onboarding_id, position);
