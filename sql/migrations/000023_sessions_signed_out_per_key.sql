-- 000023: sign-outs held per key, within a bound. Each sign-out was one row kept for 12 hours and
-- read by every node every second: a key that signed in and out in a loop grew that read, and every
-- node's memory, without end. A key now holds at most a bounded number of single sign-outs; the one
-- past it signs out every session that key opened before it, in one row (key_floor), and the single
-- rows it covers go.
ALTER TABLE session_revocations ADD COLUMN key_floor boolean NOT NULL DEFAULT false;
CREATE INDEX session_revocations_by_key ON session_revocations (revoked_by) WHERE NOT key_floor;
