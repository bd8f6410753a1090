-- Binds each key to the one token issued for it: the SHA-256 digest of the compact token (not
-- the token). Keys recorded before have none ("unbound"): any correctly signed token with their
-- id still passes, until they are rotated (docs/api.md, Keys issued before tokens were bound).
ALTER TABLE api_keys ADD COLUMN token_sha256 BLOB CHECK (token_sha256 IS NULL OR length(token_sha256) = 32);
