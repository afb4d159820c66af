-- API bearer tokens (issue 12, package auth): `leasehold serve` refuses
-- every call but /healthz without one. Only the SHA-256 of a secret is
-- kept (hash), so a copy of the store grants nothing; scopes are the
-- token's scopes, space-separated (a scope has no spaces). revoked_at is
-- NULL while the token is live.
CREATE TABLE api_tokens (
    id         text        NOT NULL PRIMARY KEY,
    name       text        NOT NULL,
    hash       bytea       NOT NULL UNIQUE,
    scopes     text        NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
