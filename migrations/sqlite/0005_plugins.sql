-- Plugins: a company's WebAssembly components, their bindings to hooks and accounts,
-- and the log of every invocation.

CREATE TABLE plugins (
    id           TEXT PRIMARY KEY,
    company_id   TEXT NOT NULL REFERENCES companies(id),
    name         TEXT NOT NULL,
    version      TEXT NOT NULL,
    -- The cofre:rules interface version the component was built for.
    interface    TEXT NOT NULL,
    component    BLOB NOT NULL,
    sha256       TEXT NOT NULL,
    -- JSON array of {hook, accounts (null: all), config}.
    bindings     TEXT NOT NULL DEFAULT '[]',
    created_at   BIGINT NOT NULL,
    deleted_at   BIGINT
);
CREATE INDEX plugins_company ON plugins(company_id, created_at);

CREATE TABLE plugin_invocations (
    id           TEXT PRIMARY KEY,
    plugin_id    TEXT NOT NULL REFERENCES plugins(id),
    company_id   TEXT NOT NULL REFERENCES companies(id),
    hook         TEXT NOT NULL,
    -- ALLOW, DENY, KEEP, REPLACE, DROP, or ERROR
    decision     TEXT NOT NULL,
    code         TEXT,
    duration_us  BIGINT NOT NULL,
    error        TEXT,
    at           BIGINT NOT NULL
);
CREATE INDEX plugin_invocations_plugin ON plugin_invocations(plugin_id, at);
