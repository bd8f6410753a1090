-- Tickets for the pets' insert turn, so that one group of creates can insert while the group
-- before it commits, and ids still become visible in the order they are handed out.
--
-- `pet_insert_turn` is called first in a group's transaction. It takes the turn (a
-- session-level advisory lock, released by the caller once its insert statement is done), the
-- release before's exclusive insert lock in shared mode, and the next ticket, which it locks
-- until the transaction ends. `pet_insert_wait` is called just before the commit: it waits for
-- every transaction holding one of the `window` tickets before this one to end, so no group
-- commits before one that inserted earlier. A release that holds the insert lock exclusively
-- until its commit still excludes every group of this release, and they it.
--
-- Tickets are kept modulo 2^31 in the advisory lock's second key; a transaction open while
-- 2^31 others take tickets is not a case to guard against. Expand-only: a new sequence and
-- functions. SQLite has one writer and needs none of this.
CREATE SEQUENCE pet_insert_tickets;

CREATE FUNCTION pet_insert_turn(turn_key BIGINT, insert_key BIGINT, ticket_class INTEGER)
RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    ticket BIGINT;
BEGIN
    PERFORM pg_advisory_lock(turn_key);
    PERFORM pg_advisory_xact_lock_shared(insert_key);
    ticket := nextval('pet_insert_tickets');
    PERFORM pg_advisory_xact_lock(ticket_class, (ticket % 2147483648)::INTEGER);
    RETURN ticket;
END
$$;

CREATE FUNCTION pet_insert_wait(ticket BIGINT, ticket_class INTEGER, window_size INTEGER)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    earlier BIGINT;
BEGIN
    FOR earlier IN SELECT generate_series(ticket - window_size, ticket - 1) LOOP
        IF earlier > 0 THEN
            PERFORM pg_advisory_xact_lock_shared(ticket_class, (earlier % 2147483648)::INTEGER);
        END IF;
    END LOOP;
END
$$;
