-- Nothing to undo (up.sql).
SELECT 1;
