-- Node keys and signatures (issue 11, journal/sign.go).
--
-- node_keys: every public key a node has registered, newest version last.
-- A grant or handoff carries the grantee's newest key (journal.BindKeys,
-- in the lease change's transaction), so the key in force for an epoch is
-- the one current when it began, and entries keep verifying under it after
-- the node registers another.
CREATE TABLE node_keys (
    node          text        NOT NULL,
    version       bigint      NOT NULL,
    public_key    bytea       NOT NULL,
    registered_at timestamptz NOT NULL,
    PRIMARY KEY (node, version)
);

-- holder_key: the key the current epoch's grant carries (journal.State
-- HolderKey); empty when the holder signs nothing.
ALTER TABLE worlds ADD COLUMN holder_key bytea NOT NULL DEFAULT '';

-- leasehold_journal_append gains the signed batch of journal.planSigned,
-- checked in the same order. Postgres cannot verify ed25519, so the driver
-- verifies the signature in Go against the key it believes the epoch's
-- grant carries and passes that key and its verdict (p_key, p_sigok); under
-- the row lock the function takes the verdict only if p_key is the head's
-- key. If it is not (the driver has not seen this epoch's key yet), the
-- function writes nothing and answers 'key_unknown' with the head's key in
-- o_key, and the driver verifies against it and calls again. An unsigned
-- append by a holder whose grant carries a key is refused 'bad_signature'.
DROP FUNCTION leasehold_journal_append(text, timestamptz, text[], bigint[], bigint[], text[], text[], bytea[]);

CREATE FUNCTION leasehold_journal_append(p_world text, p_now timestamptz,
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
        v_firsts := array_fill(0::bigint, ARRAY[n]);
        FOR i IN 1 .. n LOOP
            IF p_keys[i] <> '' THEN
                SELECT position INTO v_first FROM journal_entries
                    WHERE world = p_world AND key = p_keys[i] AND key <> '';
                IF FOUND THEN
                    v_firsts[i] := v_first;
                    v_dup := true;
                END IF;
            END IF;
        END LOOP;
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
            FOR i IN 1 .. n LOOP
                v_pos := v_pos + 1;
                v_new := leasehold_entry_hash(p_world, v_pos, p_epochs[i], p_kinds[i], p_holders[i], p_keys[i],
                    v_us, v_hash, p_payloads[i]);
                INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time,
                    prev_hash, hash, signature)
                VALUES (p_world, v_pos, p_epochs[i], p_kinds[i], p_holders[i], p_keys[i], p_payloads[i], v_now,
                    v_hash, v_new, CASE WHEN i = n THEN p_sig ELSE '' END);
                v_hash := v_new;
                o_position := v_pos;
                o_reason := NULL;
                RETURN NEXT;
            END LOOP;
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
