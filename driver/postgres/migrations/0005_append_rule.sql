-- The append rule of journal/append.go and the key rule of
-- journal.PlanAppendKeyed as they now stand (issue 17):
--   * a seen position past the head is refused ('seen_ahead', not
--     journaled);
--   * SPEC §4, a retried command is applied once: an append whose
--     non-empty key is already in the world's journal (in any epoch, or
--     earlier in this batch: the rows this call inserted are visible to
--     it) answers that entry's position and writes nothing. The lookup is
--     made under the world's row lock, before the lease rule; the unique
--     index makes it one probe and makes the store refuse a second entry
--     with the key whatever the function did. Keys are kept as long as
--     the journal.
-- leasehold_journal_append is replaced whole; migration 0002 holds the
-- rest of its story.

CREATE UNIQUE INDEX journal_entries_key ON journal_entries (world, key) WHERE key <> '';

-- leasehold_journal_append appends a batch of validated data entries to one
-- world, in order. For each request it returns the position written, or the
-- refusal reason with the lease in force. p_now overrides the store clock
-- (tests); NULL means clock_timestamp(), read after the row lock is taken.
CREATE OR REPLACE FUNCTION leasehold_journal_append(p_world text, p_now timestamptz,
    p_holders text[], p_epochs bigint[], p_seens bigint[], p_kinds text[], p_keys text[], p_payloads bytea[])
RETURNS TABLE (o_position bigint, o_reason text, o_epoch bigint, o_holder text)
LANGUAGE plpgsql
AS $$
DECLARE
    h        worlds%ROWTYPE;
    v_now    timestamptz;
    v_us     bigint;
    v_pos    bigint;
    v_hash   bytea;
    v_new    bytea;
    v_reason text;
    v_marked text[] := '{}';
    v_body   bytea;
    v_first  bigint;
BEGIN
    -- The lock serializes every writer of this world (lease changes take it
    -- too), so the lease read here is the lease in force at commit.
    SELECT * INTO h FROM worlds WHERE id = p_world FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'world % does not exist', p_world USING ERRCODE = 'no_data_found';
    END IF;
    -- journal.StoreNow: store times never decrease along a journal.
    v_now := greatest(coalesce(p_now, clock_timestamp()), h.last_time);
    v_us := (extract(epoch FROM v_now) * 1000000)::bigint; -- exact: timestamptz holds microseconds
    v_pos := h.position;
    v_hash := h.last_hash;
    o_epoch := h.epoch;
    o_holder := h.holder;
    FOR i IN 1 .. coalesce(array_length(p_holders, 1), 0) LOOP
        -- The key rule: a key already appended answers its first position.
        IF p_keys[i] <> '' THEN
            SELECT position INTO v_first FROM journal_entries
                WHERE world = p_world AND key = p_keys[i] AND key <> '';
            IF FOUND THEN
                o_position := v_first;
                o_reason := NULL;
                RETURN NEXT;
                CONTINUE;
            END IF;
        END IF;
        -- journal.CheckAppend, in the same order.
        v_reason := CASE
            WHEN p_epochs[i] <> h.epoch THEN 'stale_epoch'
            WHEN h.holder = '' THEN 'revoked'
            WHEN p_holders[i] <> h.holder THEN 'not_holder'
            WHEN NOT (h.expires_at > v_now) THEN 'expired'
            WHEN p_seens[i] < h.granted_position THEN 'seen_behind'
            WHEN p_seens[i] > h.position THEN 'seen_ahead'
        END;
        IF v_reason IS NULL THEN
            v_pos := v_pos + 1;
            v_new := leasehold_entry_hash(p_world, v_pos, p_epochs[i], p_kinds[i], p_holders[i], p_keys[i],
                v_us, v_hash, p_payloads[i]);
            INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time,
                prev_hash, hash, signature)
            VALUES (p_world, v_pos, p_epochs[i], p_kinds[i], p_holders[i], p_keys[i], p_payloads[i], v_now,
                v_hash, v_new, '');
            v_hash := v_new;
            o_position := v_pos;
            o_reason := NULL;
        ELSE
            o_position := 0;
            o_reason := v_reason;
            -- Journaled reasons, at most once per holder per epoch.
            IF v_reason IN ('stale_epoch', 'revoked', 'not_holder', 'expired')
               AND NOT (p_holders[i] = ANY (v_marked)) THEN
                v_marked := v_marked || p_holders[i];
                INSERT INTO journal_rejections (world, epoch, holder) VALUES (p_world, h.epoch, p_holders[i])
                    ON CONFLICT DO NOTHING;
                IF FOUND THEN
                    -- journal.Rejected as encoding/json writes it (compact,
                    -- fields in declaration order).
                    v_body := convert_to('{"holder":' || to_json(p_holders[i])::text || ',"epoch":' || p_epochs[i]
                        || ',"reason":"' || v_reason || '"}', 'UTF8');
                    v_pos := v_pos + 1;
                    v_new := leasehold_entry_hash(p_world, v_pos, h.epoch, 'append.rejected', h.holder, '',
                        v_us, v_hash, v_body);
                    INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time,
                        prev_hash, hash, signature)
                    VALUES (p_world, v_pos, h.epoch, 'append.rejected', h.holder, '', v_body, v_now, v_hash, v_new, '');
                    v_hash := v_new;
                END IF;
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF v_pos > h.position THEN
        UPDATE worlds SET position = v_pos, last_hash = v_hash, last_time = v_now WHERE id = p_world;
    END IF;
END
$$;
