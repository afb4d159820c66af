package drivertest

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// edgeCases hold the limits and character rules of docs/LIMITS.md to every
// store alike (issue 17: defects 9, 11, 12 and 4).
var edgeCases = []Case{
	{"KeysRefuseControlAndBidiCharacters", caseKeysRefuseControlAndBidi},
	{"BatchPayloadBoundRefusedAlike", caseBatchPayloadBound},
	{"AppendSeenBeyondHeadRefused", caseAppendSeenBeyondHead},
	{"AppendKeyAppliedOnce", caseAppendKeyAppliedOnce},
	{"PayloadDepthBoundAlike", casePayloadDepthBound},
}

// refusedKeys are keys the one key rule (journal.ValidateKey) refuses: C0,
// DEL, C1 and the bidirectional embeddings, overrides and isolates.
var refusedKeys = map[string]string{
	"NUL":    "k\x00",
	"tab":    "k\tk",
	"DEL":    "k\x7f",
	"U+0080": "k\u0080",
	"U+0085": "k\u0085", // NEL: a line break to many log viewers
	"U+009F": "k\u009f",
	"U+202A": "k\u202a",
	"U+202E": "k\u202ekey", // RLO: displays reversed
	"U+2066": "k\u2066",
	"U+2069": "k\u2069",
}

func requireInputError(t *testing.T, err error, what string) {
	t.Helper()
	var ie *journal.InputError
	require.True(t, errors.As(err, &ie), "%s: want a *journal.InputError, got %v", what, err)
	require.ErrorIs(t, err, driver.ErrInvalid, what)
}

func caseKeysRefuseControlAndBidi(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("w", "home")
	run := e.claimOne("a")
	rs, es := e.runStore(), e.effects()
	// A journal with one keyed entry, to tamper with for import.
	src := newEnv(t, f)
	src.create("w1", "home")
	out, err := src.d.JournalAppend(src.ctx, &driver.JournalAppendParams{World: "w1", Requests: []journal.AppendRequest{
		{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Key: "good", Payload: []byte(`{}`)}}})
	require.NoError(t, err)
	require.NoError(t, out[0].Err)
	entries := src.read("w1")

	for name, key := range refusedKeys {
		_, err := rs.RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", UniqueKey: key}}})
		requireInputError(t, err, "unique key "+name)

		out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{
			{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Key: key, Payload: []byte(`{}`)}}})
		require.NoError(t, err)
		requireInputError(t, out[0].Err, "append key "+name)

		_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: run.ID, Fence: run.Fence, Key: key})
		requireInputError(t, err, "effect key "+name)

		bad := append([]journal.Entry(nil), entries...)
		bad[1].Key = key
		journal.Seal(&bad[1])
		dst := newEnv(t, f)
		_, err = dst.d.JournalImport(dst.ctx, &driver.JournalImportParams{Entries: bad})
		require.Error(t, err, "import key %s", name)
		_, err = dst.d.WorldGet(dst.ctx, &driver.WorldGetParams{World: "w1"})
		require.ErrorIs(t, err, driver.ErrNotFound, "import key %s: nothing written", name)
	}
	// Nothing was written by the refusals.
	require.Len(t, e.read("w"), 1)
	effs, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: run.ID})
	require.NoError(t, err)
	require.Empty(t, effs)
	// Text beyond ASCII that is not a control stays a valid key.
	for _, key := range []string{"é", "e\u0301", "ключ", "日本", "\U0001F600", "a b"} {
		_, err := rs.RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", UniqueKey: key}}})
		require.NoError(t, err, "%q", key)
	}
}

// caseBatchPayloadBound: an enqueue or append batch whose payloads total
// more than driver.MaxBatchPayloadBytes (compact) is refused whole, typed,
// before any write; whitespace does not count against it.
func caseBatchPayloadBound(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("w", "home")
	big := []byte(`"` + strings.Repeat("x", journal.MaxPayloadBytes-2) + `"`) // exactly the entry limit
	n := driver.MaxBatchPayloadBytes/len(big) + 1
	rs := make([]runs.Enqueue, n)
	reqs := make([]journal.AppendRequest, n)
	for i := range rs {
		rs[i] = runs.Enqueue{Queue: "q", Payload: big}
		reqs[i] = journal.AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: big}
	}
	_, err := e.runStore().RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: rs})
	requireInputError(t, err, "enqueue over the batch bound")
	_, err = e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: reqs})
	requireInputError(t, err, "append over the batch bound")
	require.Len(t, e.read("w"), 1, "nothing appended")
	require.Empty(t, e.claim("q", "a", 10), "nothing enqueued")

	// Whitespace is not payload: a run whose raw input is far over the
	// entry limit but compact {} is accepted.
	ws := strings.Repeat(" ", 3*journal.MaxPayloadBytes)
	out := e.enqueue(runs.Enqueue{Queue: "q", Payload: []byte(ws + "{}" + ws)})
	require.Equal(t, "{}", string(e.run(out[0].Run.ID).Payload))
}

// caseAppendSeenBeyondHead: a seen position past the head (no mirror can
// have replayed it) is refused typed, written nowhere, and not journaled.
func caseAppendSeenBeyondHead(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("w", "home")
	for _, seen := range []int64{2, math.MaxInt64} {
		_, err := e.append1("w", "home", 1, seen, "note", "{}")
		var re *journal.RefusedError
		require.True(t, errors.As(err, &re), "seen %d: want a *journal.RefusedError, got %v", seen, err)
		require.Equal(t, journal.ReasonSeenAhead, re.Reason)
		require.ErrorIs(t, err, driver.ErrInvalid)
	}
	require.Len(t, e.read("w"), 1, "nothing written, nothing journaled")
	pos, err := e.append1("w", "home", 1, 1, "note", "{}")
	require.NoError(t, err)
	require.Equal(t, int64(2), pos)
	pos, err = e.append1("w", "home", 1, 2, "note", "{}")
	require.NoError(t, err, "seen at the head")
	require.Equal(t, int64(3), pos)
	e.audit("w")
}

// caseAppendKeyAppliedOnce: SPEC §4, a retried command is applied once. An
// append whose non-empty key was already appended to the world — in this
// batch, an earlier one, or an earlier epoch — is answered with the first
// entry's position and writes nothing; the empty key is no key.
func caseAppendKeyAppliedOnce(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("w", "home")
	req := func(holder string, epoch, seen int64, key, payload string) journal.AppendRequest {
		return journal.AppendRequest{Holder: holder, Epoch: epoch, SeenPosition: seen, Kind: "note", Key: key, Payload: []byte(payload)}
	}
	appendAll := func(reqs ...journal.AppendRequest) []journal.AppendOutcome {
		t.Helper()
		out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: reqs})
		require.NoError(t, err)
		return out
	}
	// Twice in one batch, with a neighbour between.
	out := appendAll(req("home", 1, 1, "k1", `{"n":1}`), req("home", 1, 1, "", `{"n":2}`), req("home", 1, 1, "k1", `{"n":3}`))
	for _, o := range out {
		require.NoError(t, o.Err)
	}
	require.Equal(t, []int64{2, 3, 2}, []int64{out[0].Position, out[1].Position, out[2].Position})
	require.Len(t, e.read("w"), 3)

	// In a second batch.
	out = appendAll(req("home", 1, 3, "k1", `{"n":4}`), req("home", 1, 3, "k2", `{"n":5}`))
	require.NoError(t, out[0].Err)
	require.Equal(t, int64(2), out[0].Position, "the first entry's position")
	require.NoError(t, out[1].Err)
	require.Equal(t, int64(4), out[1].Position)
	es := e.read("w")
	require.Len(t, es, 4)
	require.Equal(t, `{"n":1}`, string(es[1].Payload), "the first application stands")

	// Across a handoff: the old holder's retry and the new holder's both
	// answer the first position; nothing is written, nothing rejected.
	e.handoff("w", "home", "a", 1) // position 5, epoch 2
	out = appendAll(req("home", 1, 4, "k2", `{"n":6}`), req("a", 2, 5, "k2", `{"n":7}`), req("a", 2, 5, "k1", `{}`))
	for i, o := range out {
		require.NoError(t, o.Err, "request %d", i)
	}
	require.Equal(t, []int64{4, 4, 2}, []int64{out[0].Position, out[1].Position, out[2].Position})
	require.Len(t, e.read("w"), 5)
	require.Zero(t, countKind(e.read("w"), journal.KindRejected))

	// A key never appended is still subject to the append rule.
	out = appendAll(req("home", 1, 5, "k3", `{}`))
	require.ErrorIs(t, out[0].Err, driver.ErrFenced)
	pos, err := e.append1("w", "a", 2, 5, "note", `{}`)
	require.NoError(t, err)
	// The refused k3 was not recorded: it can still be appended, once.
	out = appendAll(req("a", 2, pos, "k3", `{}`), req("a", 2, pos, "k3", `{}`))
	require.NoError(t, out[0].Err)
	require.Equal(t, out[0].Position, out[1].Position)

	// The empty key is not deduplicated.
	p1, err := e.append1("w", "a", 2, 5, "note", `{}`)
	require.NoError(t, err)
	p2, err := e.append1("w", "a", 2, 5, "note", `{}`)
	require.NoError(t, err)
	require.Equal(t, p1+1, p2)
	e.audit("w")

	// The journal exports and imports as it is, and the imported world
	// keeps honouring its keys.
	dst := newEnv(t, f)
	_, err = dst.d.JournalImport(dst.ctx, &driver.JournalImportParams{Entries: e.read("w")})
	require.NoError(t, err)
	head := dst.get("w")
	out, err = dst.d.JournalAppend(dst.ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{
		req("a", 2, head.Position, "k2", `{}`)}})
	require.NoError(t, err)
	require.NoError(t, out[0].Err)
	require.Equal(t, int64(4), out[0].Position)
	require.Equal(t, head.Position, dst.get("w").Position)
}

// casePayloadDepthBound: one JSON rule at every edge that takes a payload
// (append, enqueue, emit, an effect's result): nesting deeper than
// journal.MaxPayloadDepth is refused, typed, before any write; what is
// accepted at the bound exports, audits and imports (issue 17, defect 4).
func casePayloadDepthBound(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("w", "home")
	deep := func(n int) string {
		return strings.Repeat(`{"a":[`, n/2) + strings.Repeat("[", n%2) + strings.Repeat("]", n%2) + strings.Repeat(`]}`, n/2)
	}
	run := e.claimOne("a")
	rs, es := e.runStore(), e.effects()
	for _, n := range []int{journal.MaxPayloadDepth + 1, 10000} {
		p := deep(n)
		_, err := e.append1("w", "home", 1, 1, "note", p)
		requireInputError(t, err, "append")
		_, err = rs.RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "deep", Payload: []byte(p)}}})
		requireInputError(t, err, "enqueue")
		_, err = es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{{RunID: run.ID, Fence: run.Fence, Seq: 1, Kind: "k", Payload: []byte(p)}}})
		requireInputError(t, err, "emit")
		_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: run.ID, Fence: run.Fence, Key: "k", Result: []byte(p)})
		requireInputError(t, err, "effect result")
	}
	require.Len(t, e.read("w"), 1, "nothing appended")
	require.Empty(t, e.claim("deep", "a", 1), "nothing enqueued")

	// At the bound: accepted everywhere, and the journal survives
	// export → audit → import byte for byte.
	p := deep(journal.MaxPayloadDepth)
	_, err := e.append1("w", "home", 1, 1, "note", p)
	require.NoError(t, err)
	e.enqueue(runs.Enqueue{Queue: "deep", Payload: []byte(p)})
	_, err = es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{{RunID: run.ID, Fence: run.Fence, Seq: 1, Kind: "k", Payload: []byte(p)}}})
	require.NoError(t, err)
	src := e.read("w")
	require.Equal(t, p, string(src[1].Payload))
	var buf bytes.Buffer
	w := journal.NewWriter(&buf)
	for i := range src {
		require.NoError(t, w.Write(&src[i]))
	}
	require.NoError(t, w.Close())
	r := journal.NewReader(&buf)
	var back []journal.Entry
	for {
		en, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		back = append(back, *en)
	}
	require.True(t, journal.Audit(back).OK())
	dst := newEnv(t, f)
	_, err = dst.d.JournalImport(dst.ctx, &driver.JournalImportParams{Entries: back})
	require.NoError(t, err)
	require.Equal(t, src, dst.read("w"))
}
