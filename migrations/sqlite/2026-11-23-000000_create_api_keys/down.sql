DROP INDEX api_keys_revision;
DROP TABLE api_keys;
