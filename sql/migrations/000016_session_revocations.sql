-- 000016: dashboard sessions signed out before they expired. A session is a signed cookie (nothing
-- of it is stored while it lives); signing out writes the digest of its id here, with the session's
-- own expiry, and every node reads the live ones every second beside the keys, so that the cookie is
-- refused on every node, not only forgotten by the browser that held it. Retention deletes a row once
-- its session would have expired anyway.
CREATE TABLE session_revocations (
  session_digest text        PRIMARY KEY,
  expires_at     timestamptz NOT NULL,
  revoked_at     timestamptz NOT NULL,
  revoked_by     text
);
