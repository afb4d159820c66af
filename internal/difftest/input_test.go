package difftest

import (
	"math"
	"strings"
	"time"

	"github.com/leasehold/leasehold/journal"
)

// input reads the fuzz bytes as a stream of small choices. Past its end
// every choice is 0 — the first, valid value of each pool — so a short
// input still decodes to a well-formed last op.
type input struct {
	b []byte
	i int
}

func (in *input) done() bool { return in.i >= len(in.b) }

func (in *input) byte() byte {
	if in.done() {
		return 0
	}
	c := in.b[in.i]
	in.i++
	return c
}

// pick chooses among n.
func (in *input) pick(n int) int { return int(in.byte()) % n }

// from chooses one of a pool.
func from[T any](in *input, pool []T) T { return pool[in.pick(len(pool))] }

// The pools: the first values of each are the valid, small id space the
// ops are meant to collide on (2 queues, 3 worlds, 2 owners, a few keys);
// the rest are hostile — bad UTF-8, NUL, control and bidi characters,
// over-long, reserved, out of range.
var (
	queues  = []string{"q0", "q1", "q0", "q1", "", "q\x00", "\xff", strings.Repeat("q", 129), "a b"}
	owners  = []string{"o0", "o1", "o0", "o1", "", "o\x00", "ü", strings.Repeat("o", 129)}
	worlds  = []string{"w0", "w1", "w2", "w0", "w1", "w2", "", "w\x00", "\xff", strings.Repeat("w", 129), "w 1", "W0", "w.1", "w-1", strings.Repeat("w", 128)}
	holders = []string{"h0", "h1", "h0", "h1", "h2", "", "h 1", "h\x00"}
	keys    = []string{"k0", "k1", "k2", "k0", "", "k\x00", "\xff", strings.Repeat("k", 257), "\u202e", "é", "e\u0301", "k\t"}
	// uniqueKeys are the optional keys (a run's unique key, an append's
	// idempotency key): none first.
	uniqueKeys = []string{"", "", "k0", "k1", "k\x00", "\xff", strings.Repeat("k", 257), "é", "e\u0301"}
	reasons    = []string{"", "boom", "boom", "\xff bad", "tab\there", "nul\x00", "\u202ex", strings.Repeat("r", journal.MaxReasonBytes+1)}
	kinds      = []string{"note", "step", "note", "", "lease.granted", "append.rejected", "bad kind", "\xff", strings.Repeat("n", 129)}

	payloads = [][]byte{
		[]byte(`{}`),
		nil,
		[]byte(`{"a": 1, "b": [true, null]}`),
		[]byte(`[1,2,3]`),
		[]byte(`"x\u0000y"`),
		[]byte(` {"b":2} `),
		[]byte(`{"a":1,"a":2}`),
		[]byte(`12345678901234567890123`),
		[]byte(`1e400`),
		[]byte(`-0`),
		[]byte(`"\ud800"`),
		[]byte(`{"k":"\u2028"}`),
		[]byte("not json"),
		[]byte("\xff\xfe"),
		[]byte("{\"a\":\"\xff\"}"),
		[]byte("\x00"),
		[]byte("{\"a\":1}\x00"),
		deep(journal.MaxPayloadDepth),
		deep(journal.MaxPayloadDepth + 1),
		sized(journal.MaxPayloadBytes),
		sized(journal.MaxPayloadBytes + 1),
		// The small valid ones again: most payloads and results are valid,
		// so that the ops they ride on get past validation.
		[]byte(`{}`), nil, []byte(`[1,2,3]`), []byte(`{"a": 1, "b": [true, null]}`), []byte(`"x\u0000y"`), []byte(`{}`), nil,
	}

	ints       = []int{0, 1, 2, 3, 1, -1, 10, 1000, 1001, math.MaxInt32, math.MaxInt64, math.MinInt64}
	limits     = []int{1, 2, 10, 1, 0, -1, 1000, 1001, math.MaxInt32, math.MaxInt64, math.MinInt64}
	priorities = []int{0, 1, 0, 1000, 1001, -1, math.MaxInt64, math.MinInt64}
	attempts   = []int{0, 1, 2, 3, 1000, 1001, -1, math.MaxInt64}
	durations  = []time.Duration{30 * time.Second, time.Second, 0, time.Nanosecond, 999 * time.Nanosecond, time.Microsecond,
		1500 * time.Nanosecond, time.Millisecond, 24 * time.Hour, 24*time.Hour + 1, -time.Second, math.MaxInt64, math.MinInt64,
		365 * 24 * time.Hour, 365*24*time.Hour + 1}
	// advances move the shared store clock; the last ones step it back
	// (a store clock may: journal.StoreNow keeps journal times monotonic).
	advances = []time.Duration{time.Second, 29 * time.Second, 30 * time.Second, 31 * time.Second, 0, time.Nanosecond,
		999 * time.Nanosecond, 1500 * time.Nanosecond, time.Millisecond, 10 * time.Minute, time.Hour, 25 * time.Hour,
		-time.Second, -time.Hour}
)

// deep is a valid JSON array nested n deep.
func deep(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }

// sized is a JSON string of exactly n bytes.
func sized(n int) []byte { return []byte(`"` + strings.Repeat("x", n-2) + `"`) }

// near chooses a value around cur: itself (most often), one below or above,
// or a hostile one — for fences, epochs and positions.
func near(in *input, cur int64) int64 {
	switch in.pick(8) {
	case 0, 1, 2:
		return cur
	case 3:
		return cur - 1
	case 4:
		return cur + 1
	case 5:
		return 0
	case 6:
		return -1
	default:
		return math.MaxInt64
	}
}
