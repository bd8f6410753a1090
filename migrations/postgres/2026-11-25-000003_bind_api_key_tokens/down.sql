ALTER TABLE api_keys DROP COLUMN token_sha256;
