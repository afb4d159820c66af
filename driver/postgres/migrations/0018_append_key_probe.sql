-- The signed append's key probe (0014), one index probe per key, always.
-- 0014 looked the batch's keys up with a LEFT JOIN of the key array to
-- journal_entries; PL/pgSQL plans that statement with the array's values
-- (custom plans), and the planner, which sees a 200-key array against a
-- world's rows, chose to scan the world's rows and hash the keys: the
-- probe grew with the journal (6.6 ms per 200-entry batch at 20,000
-- entries, 28.5 ms at 160,000, while the rest of the append stayed near
-- 3 ms). A scalar subquery per key can only be run as a probe of the
-- (world, key) index, whatever the journal's size. Nothing else changes:
-- the same answers, the same rule, the same writes.
CREATE OR REPLACE FUNCTION leasehold_journal_append(p_world text, p_now timestamptz,
    p_holders text[], p_epochs bigint[], p_seens bigint[], p_kinds text[], p_keys text[], p_payloads bytea[],
    p_positions bigint[], p_sig bytea, p_key bytea, p_sigok boolean)
RETURNS TABLE (o_position bigint, o_reason text, o_epoch bigint, o_holder text, o_key bytea)
LANGUAGE plpgsql
AS $$
DECLARE
    h        worlds%ROWTYPE;
    n        int := coalesce(array_length(p_holders, 1), 0);
    v_now    timestamptz;
    v_us     bigint;
    v_pos    bigint;
    v_hash   bytea;
    v_new    bytea;
    v_reason text;
    v_marked text[] := '{}';
    v_body   bytea;
    v_first  bigint;
    v_firsts bigint[];
    v_dup    boolean := false;
    v_w      bytea := convert_to(p_world, 'UTF8');
    v_prevs  bytea[] := '{}';
    v_hashes bytea[] := '{}';
    v_k      bytea;
    v_h      bytea;
    v_y      bytea;
BEGIN
    SELECT * INTO h FROM worlds WHERE id = p_world FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'world % does not exist', p_world USING ERRCODE = 'no_data_found';
    END IF;
    v_now := greatest(coalesce(p_now, clock_timestamp()), h.last_time);
    v_us := (extract(epoch FROM v_now) * 1000000)::bigint;
    v_pos := h.position;
    v_hash := h.last_hash;
    o_epoch := h.epoch;
    o_holder := h.holder;
    o_key := NULL;

    IF octet_length(p_sig) > 0 THEN
        -- A signed batch (journal.planSigned), written whole or not at all.
        -- 2. keys: any already appended answers its position, the rest moved.
        -- One probe of the key index for the whole batch, not one per entry.
        IF EXISTS (SELECT 1 FROM unnest(p_keys) AS u(k) WHERE u.k <> '') THEN
            SELECT array_agg(CASE WHEN u.k = '' THEN 0 ELSE coalesce(
                       (SELECT j.position FROM journal_entries j
                         WHERE j.world = p_world AND j.key = u.k AND j.key <> ''), 0) END ORDER BY u.i)
                INTO v_firsts
                FROM unnest(p_keys) WITH ORDINALITY AS u(k, i);
            v_dup := EXISTS (SELECT 1 FROM unnest(v_firsts) AS f(p) WHERE f.p > 0);
        END IF;
        IF v_dup THEN
            FOR i IN 1 .. n LOOP
                o_position := v_firsts[i];
                o_reason := CASE WHEN v_firsts[i] > 0 THEN NULL ELSE 'moved' END;
                RETURN NEXT;
            END LOOP;
            RETURN;
        END IF;
        -- 3. the append rule: the first refusal refuses them all.
        FOR i IN 1 .. n LOOP
            v_reason := CASE
                WHEN p_epochs[i] <> h.epoch THEN 'stale_epoch'
                WHEN h.holder = '' THEN 'revoked'
                WHEN p_holders[i] <> h.holder THEN 'not_holder'
                WHEN NOT (h.expires_at > v_now) THEN 'expired'
                WHEN p_seens[i] < h.granted_position THEN 'seen_behind'
                WHEN p_seens[i] > h.position THEN 'seen_ahead'
            END;
            EXIT WHEN v_reason IS NOT NULL;
        END LOOP;
        -- 4. positions.
        IF v_reason IS NULL AND p_positions[1] <> h.position + 1 THEN
            v_reason := 'moved';
        END IF;
        -- 5. the signature, against the key this epoch's grant carries.
        IF v_reason IS NULL THEN
            IF octet_length(h.holder_key) = 0 THEN
                v_reason := 'bad_signature';
            ELSIF p_key IS DISTINCT FROM h.holder_key THEN
                o_key := h.holder_key;
                FOR i IN 1 .. n LOOP
                    o_position := 0;
                    o_reason := 'key_unknown';
                    RETURN NEXT;
                END LOOP;
                RETURN;
            ELSIF NOT p_sigok THEN
                v_reason := 'bad_signature';
            END IF;
        END IF;
        IF v_reason IS NULL THEN
            -- The chain is sequential, so the hashes are taken in a loop
            -- (leasehold_entry_hash's expression inline: a call per entry
            -- was a third of the loop); the rows go in with one INSERT, so
            -- the journal's statement trigger (0013) fires once per batch,
            -- not once per entry.
            FOR i IN 1 .. n LOOP
                v_pos := v_pos + 1;
                v_k := convert_to(p_kinds[i], 'UTF8');
                v_h := convert_to(p_holders[i], 'UTF8');
                v_y := convert_to(p_keys[i], 'UTF8');
                v_new := sha256('\x6c65617365686f6c642f6a6f75726e616c2f76310a'::bytea -- "leasehold/journal/v1\n"
                    || int4send(length(v_w)) || v_w
                    || int8send(v_pos)
                    || int8send(p_epochs[i])
                    || int4send(length(v_k)) || v_k
                    || int4send(length(v_h)) || v_h
                    || int4send(length(v_y)) || v_y
                    || int8send(v_us)
                    || int4send(length(v_hash)) || v_hash
                    || int4send(length(p_payloads[i])) || p_payloads[i]);
                v_prevs := v_prevs || v_hash;
                v_hashes := v_hashes || v_new;
                v_hash := v_new;
            END LOOP;
            INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time,
                prev_hash, hash, signature)
            SELECT p_world, h.position + u.i, u.e, u.k, u.ho, u.ky, u.p, v_now, u.pr, u.hs,
                CASE WHEN u.i = n THEN p_sig ELSE ''::bytea END
            FROM unnest(p_epochs, p_kinds, p_holders, p_keys, p_payloads, v_prevs, v_hashes)
                WITH ORDINALITY AS u(e, k, ho, ky, p, pr, hs, i);
            RETURN QUERY SELECT h.position + g, NULL::text, o_epoch, o_holder, o_key
                FROM generate_series(1, n) AS g;
        ELSE
            IF v_reason IN ('stale_epoch', 'revoked', 'not_holder', 'expired', 'bad_signature') THEN
                INSERT INTO journal_rejections (world, epoch, holder) VALUES (p_world, h.epoch, p_holders[1])
                    ON CONFLICT DO NOTHING;
                IF FOUND THEN
                    v_body := convert_to('{"holder":' || to_json(p_holders[1])::text || ',"epoch":' || p_epochs[1]
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
            FOR i IN 1 .. n LOOP
                o_position := 0;
                o_reason := v_reason;
                RETURN NEXT;
            END LOOP;
        END IF;
        IF v_pos > h.position THEN
            UPDATE worlds SET position = v_pos, last_hash = v_hash, last_time = v_now WHERE id = p_world;
        END IF;
        RETURN;
    END IF;

    -- Unsigned requests, one by one (migration 0005), and refused
    -- 'bad_signature' when the holder's grant carries a key.
    FOR i IN 1 .. n LOOP
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
        v_reason := CASE
            WHEN p_epochs[i] <> h.epoch THEN 'stale_epoch'
            WHEN h.holder = '' THEN 'revoked'
            WHEN p_holders[i] <> h.holder THEN 'not_holder'
            WHEN NOT (h.expires_at > v_now) THEN 'expired'
            WHEN p_seens[i] < h.granted_position THEN 'seen_behind'
            WHEN p_seens[i] > h.position THEN 'seen_ahead'
            WHEN octet_length(h.holder_key) > 0 THEN 'bad_signature'
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
            IF v_reason IN ('stale_epoch', 'revoked', 'not_holder', 'expired', 'bad_signature')
               AND NOT (p_holders[i] = ANY (v_marked)) THEN
                v_marked := v_marked || p_holders[i];
                INSERT INTO journal_rejections (world, epoch, holder) VALUES (p_world, h.epoch, p_holders[i])
                    ON CONFLICT DO NOTHING;
                IF FOUND THEN
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
