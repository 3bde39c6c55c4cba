-- Tenancy (BaaS mode is the company feature BAAS), console users, bank accounts,
-- applications, the external directory and console sessions. Timestamps are Unix
-- milliseconds (UTC); money is integer centavos.
-- SQLite flavour: booleans are INTEGER 0/1 (the sqlx Any driver maps no SQLite BOOLEAN).

CREATE TABLE companies (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    tax_id      TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);

CREATE TABLE company_features (
    company_id  TEXT NOT NULL REFERENCES companies(id),
    feature     TEXT NOT NULL,
    enabled_at  BIGINT NOT NULL,
    PRIMARY KEY (company_id, feature)
);

CREATE TABLE accounts (
    id                        TEXT PRIMARY KEY,
    company_id                TEXT NOT NULL REFERENCES companies(id),
    is_default                INTEGER NOT NULL,
    withdraw_key_api_enabled  INTEGER NOT NULL DEFAULT 0,
    correlation_id            TEXT,
    created_at                BIGINT NOT NULL
);
CREATE INDEX accounts_company ON accounts(company_id, created_at);
-- One main account per company.
CREATE UNIQUE INDEX accounts_one_default ON accounts(company_id) WHERE is_default;

CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    company_id     TEXT REFERENCES companies(id),
    email          TEXT NOT NULL UNIQUE,
    password_hash  TEXT NOT NULL,
    role           TEXT NOT NULL,
    created_at     BIGINT NOT NULL
);

CREATE TABLE user_permissions (
    user_id     TEXT NOT NULL REFERENCES users(id),
    permission  TEXT NOT NULL,
    granted_at  BIGINT NOT NULL,
    PRIMARY KEY (user_id, permission)
);

CREATE TABLE applications (
    id           TEXT PRIMARY KEY,
    company_id   TEXT NOT NULL REFERENCES companies(id),
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    name         TEXT NOT NULL,
    type         TEXT NOT NULL,
    client_id    TEXT NOT NULL UNIQUE,
    secret_hash  TEXT NOT NULL,
    is_active    INTEGER NOT NULL DEFAULT 1,
    scopes       TEXT NOT NULL DEFAULT '[]',
    allowed_ips  TEXT NOT NULL DEFAULT '[]',
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX applications_company ON applications(company_id, created_at);

CREATE TABLE dict_entries (
    key             TEXT PRIMARY KEY,
    type            TEXT NOT NULL,
    holder_name     TEXT NOT NULL,
    holder_tax_id   TEXT NOT NULL,
    ispb            TEXT NOT NULL,
    branch          TEXT NOT NULL,
    account_number  TEXT NOT NULL,
    account_type    TEXT NOT NULL,
    imported_at     BIGINT NOT NULL
);

CREATE TABLE console_sessions (
    id          TEXT PRIMARY KEY,
    data        TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions(expires_at);
