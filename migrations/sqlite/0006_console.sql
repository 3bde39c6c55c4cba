-- Console: sign-in lockout per email, and the audit trail of support's changes.

-- Failed sign-ins of one email inside the current window; a lock once too many.
-- Kept per email (known or not), so the lockout does not reveal which emails exist.
CREATE TABLE sign_in_failures (
    email            TEXT PRIMARY KEY,
    failures         BIGINT NOT NULL,
    window_start     BIGINT NOT NULL,
    locked_until     BIGINT
);

-- Who changed what: one row per change made in the console by support (features,
-- withdraw key API) or by a company admin (users, permissions). Never updated.
CREATE TABLE audit_log (
    id           TEXT PRIMARY KEY,
    actor_id     TEXT NOT NULL REFERENCES users(id),
    actor_email  TEXT NOT NULL,
    company_id   TEXT REFERENCES companies(id),
    action       TEXT NOT NULL,
    target       TEXT NOT NULL,
    detail       TEXT NOT NULL,
    at           BIGINT NOT NULL
);
CREATE INDEX audit_log_company ON audit_log(company_id, at);
CREATE INDEX audit_log_at ON audit_log(at);
