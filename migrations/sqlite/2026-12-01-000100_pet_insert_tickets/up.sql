-- PostgreSQL's tickets for the pets' insert turn (migrations/postgres, same name). SQLite has
-- one writer, whose `BEGIN IMMEDIATE` orders inserts: nothing to add. The migration exists on
-- both backends so that they share one list of schema versions.
SELECT 1;
