package hostile

import (
	"math"
	"strings"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// String is a named hostile string: an identifier, key, queue, kind or
// reason, as the entry point it is driven into takes it.
type String struct {
	Name  string
	Value string
}

// JSON is a named hostile payload or result, as handed in (raw bytes).
type JSON struct {
	Name  string
	Value []byte
}

// Int is a named hostile integer: a fence, id, position, epoch, limit,
// priority, attempt count or sequence number.
type Int struct {
	Name  string
	Value int64
}

// Duration is a named hostile duration: a lease, term, delay or retry.
type Duration struct {
	Name  string
	Value time.Duration
}

// Time is a named hostile store time (of an imported journal's entries).
type Time struct {
	Name  string
	Value time.Time
}

// repeatTo is s repeated until it is n bytes long (s is ASCII or n is a
// multiple of len(s)).
func repeatTo(s string, n int) string { return strings.Repeat(s, n/len(s)) + s[:n%len(s)] }

// Strings are the hostile strings: every encoding trap, then lengths at and
// one past the identifier, key and reason limits (also with the last
// character multi-byte, so a cut would split it).
func Strings() []String {
	return []String{
		{"plain", "a"},
		{"id-alphabet", "A-z_0.9:@/x"},
		{"empty", ""},
		{"space", " "},
		{"whitespace-only", " \t\r\n"},
		{"leading-space", " a"},
		{"nul", "a\x00b"},
		{"nul-only", "\x00"},
		{"c0-tab", "a\tb"},
		{"c0-lf", "a\nb"},
		{"c0-cr", "a\rb"},
		{"c0-esc", "a\x1b[31mb"},
		{"del", "a\x7fb"},
		{"c1-first", "a\u0080b"},
		{"c1-nel", "a\u0085b"},
		{"c1-csi", "a\u009bb"},
		{"c1-last", "a\u009fb"},
		{"bidi-rlo", "a\u202eb"},
		{"bidi-lre", "\u202aab"},
		{"bidi-rli", "a\u2067b"},
		{"bidi-pdi", "ab\u2069"},
		{"invalid-utf8", "a\xffb"},
		{"overlong-slash", "\xc0\xaf"},
		{"truncated-utf8", "a\xe2\x82"},
		{"lone-high-surrogate-wtf8", "a\xed\xa0\x80"},
		{"lone-low-surrogate-wtf8", "\xed\xbf\xbfb"},
		{"bom", "\ufeffa"},
		{"nfc-e-acute", "caf\u00e9"},
		{"nfd-e-acute", "cafe\u0301"},
		{"zero-width-space", "a\u200bb"},
		{"line-separator", "a\u2028b"},
		{"emoji", "a\U0001F642"},
		{"replacement-char", "a\ufffdb"},
		{"noncharacter", "a\uffffb"},
		{"sql-quote", "a'; DROP TABLE runs; --"},
		{"printf", "%s%n%x"},
		{"reserved-lease", "lease.granted"},
		{"reserved-append", "append.rejected"},
		{"reserved-world", "world.x"},
		{"dotdot", ".."},
		{"id-at-limit", repeatTo("a", journal.MaxIDBytes)},
		{"id-past-limit", repeatTo("a", journal.MaxIDBytes+1)},
		{"key-at-limit", repeatTo("k", journal.MaxKeyBytes)},
		{"key-past-limit", repeatTo("k", journal.MaxKeyBytes+1)},
		{"key-at-limit-multibyte", strings.Repeat("\u00e9", journal.MaxKeyBytes/2)},
		{"key-past-limit-multibyte", repeatTo("k", journal.MaxKeyBytes-1) + "\u00e9"},
		{"reason-at-limit", repeatTo("r", journal.MaxReasonBytes)},
		{"reason-past-limit", repeatTo("r", journal.MaxReasonBytes+1)},
		{"reason-past-limit-multibyte", repeatTo("r", journal.MaxReasonBytes-1) + "\u00e9"},
		{"reason-multiline-at-limit", repeatTo("r\n", journal.MaxReasonBytes)},
	}
}

// nested is a JSON array nested depth deep.
func nested(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
}

// jsonString is a JSON string whose encoding is exactly n bytes (n >= 2).
func jsonString(n int) []byte { return []byte(`"` + strings.Repeat("x", n-2) + `"`) }

// padded is `{}` padded with spaces to exactly n bytes.
func padded(n int) []byte { return []byte("{" + strings.Repeat(" ", n-2) + "}") }

// Payloads are the hostile JSON values: non-JSON, scalars, duplicate keys,
// NUL and surrogates raw and escaped, and sizes and depths at and one past
// journal.MaxPayloadBytes, journal.MaxPayloadRawBytes and
// journal.MaxPayloadDepth.
func Payloads() []JSON {
	return []JSON{
		{"absent", nil},
		{"empty", []byte{}},
		{"whitespace-only", []byte(" \n\t ")},
		{"nbsp-only", []byte("\u00a0")},
		{"nel-only", []byte("\u0085")},
		{"null", []byte("null")},
		{"true", []byte("true")},
		{"zero", []byte("0")},
		{"negative-zero", []byte("-0")},
		{"huge-number", []byte("1e400")},
		{"long-integer", []byte("123456789012345678901234567890")},
		{"string", []byte(`"x"`)},
		{"object", []byte(`{"a":1}`)},
		{"pretty", []byte("{ \"a\" : [ 1 , 2 ],\n \"b\" : {} }")},
		{"duplicate-keys", []byte(`{"a":1,"a":2}`)},
		{"non-json", []byte("not json")},
		{"truncated", []byte(`{"a":`)},
		{"two-documents", []byte(`{} {}`)},
		{"nan", []byte("NaN")},
		{"single-quotes", []byte(`{'a':1}`)},
		{"trailing-comma", []byte(`[1,]`)},
		{"nul-raw-in-string", []byte("\"a\x00b\"")},
		{"nul-escaped", []byte(`{"a":"\u0000"}`)},
		{"nul-after-document", []byte("{}\x00")},
		{"c1-raw-in-string", []byte("\"a\u0085b\"")},
		{"bidi-in-string", []byte("\"a\u202eb\"")},
		{"lone-surrogate-escaped", []byte(`{"a":"\ud800"}`)},
		{"surrogate-pair-escaped", []byte(`"\ud83d\ude42"`)},
		{"lone-surrogate-wtf8", []byte("\"a\xed\xa0\x80\"")},
		{"invalid-utf8", []byte("\"a\xffb\"")},
		{"bom", []byte("\ufeff{}")},
		{"nfc-vs-nfd-keys", []byte("{\"caf\u00e9\":1,\"cafe\u0301\":2}")},
		{"depth-at-limit", nested(journal.MaxPayloadDepth)},
		{"depth-past-limit", nested(journal.MaxPayloadDepth + 1)},
		{"depth-past-limit-in-string", []byte(`"` + strings.Repeat("[", journal.MaxPayloadDepth+1) + `"`)},
		{"compact-at-limit", jsonString(journal.MaxPayloadBytes)},
		{"compact-past-limit", jsonString(journal.MaxPayloadBytes + 1)},
		{"raw-at-limit", padded(journal.MaxPayloadRawBytes)},
		{"raw-past-limit", padded(journal.MaxPayloadRawBytes + 1)},
	}
}

// Ints are the hostile integers: signs, the int32 and int64 edges, and
// every integer limit of docs/LIMITS.md at and one past.
func Ints() []Int {
	return []Int{
		{"zero", 0},
		{"one", 1},
		{"two", 2},
		{"minus-one", -1},
		{"max-int32", math.MaxInt32},
		{"max-int32+1", math.MaxInt32 + 1},
		{"max-int64", math.MaxInt64},
		{"min-int64", math.MinInt64},
		{"max-priority", runs.MaxPriority},
		{"max-priority+1", runs.MaxPriority + 1},
		{"max-claim-batch", runs.MaxClaimBatch},
		{"max-claim-batch+1", runs.MaxClaimBatch + 1},
		{"max-list-limit", 10000},
		{"max-list-limit+1", 10001},
		{"max-read-limit", 100000},
		{"max-read-limit+1", 100001},
		{"js-max-safe+1", 1<<53 + 1},
	}
}

// Counts are batch sizes: empty, one, and at and one past the bounds of
// docs/LIMITS.md's batch table (driver.MaxRunCompleteBatch 10,000 and
// driver.MaxRunRenewBatch 100,000; the values are written out because the
// corpus sits below the driver package).
func Counts() []Int {
	return []Int{
		{"empty", 0},
		{"one", 1},
		{"complete-batch-at-limit", 10000},
		{"complete-batch-past-limit", 10001},
		{"renew-batch-at-limit", 100000},
		{"renew-batch-past-limit", 100001},
	}
}

// Durations are the hostile durations: signs, sub-millisecond and
// sub-microsecond (terms are stored in microseconds), and the 24 h lease
// and term bound and the 365-day delay bound at and one past.
func Durations() []Duration {
	return []Duration{
		{"zero", 0},
		{"one-ns", time.Nanosecond},
		{"minus-one-ns", -time.Nanosecond},
		{"one-and-a-half-us", 1500 * time.Nanosecond},
		{"one-ms", time.Millisecond},
		{"thirty-s", 30 * time.Second},
		{"day", 24 * time.Hour},
		{"day+1ns", 24*time.Hour + time.Nanosecond},
		{"year", runs.MaxDelay},
		{"year+1ns", runs.MaxDelay + time.Nanosecond},
		{"max-int64", math.MaxInt64},
		{"min-int64", math.MinInt64},
	}
}

// Times are hostile store times around now (the store's clock): the zero
// time, the epoch, far past and future, sub-microsecond (times are stored
// in microseconds), a non-UTC zone, and now itself and one microsecond
// after it.
func Times(now time.Time) []Time {
	return []Time{
		{"zero", time.Time{}},
		{"unix-epoch", time.Unix(0, 0).UTC()},
		{"year-1", time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC)},
		{"hour-ago", now.Add(-time.Hour)},
		{"sub-microsecond", now.Add(-time.Hour + time.Nanosecond)},
		{"non-utc-zone", now.Add(-time.Hour).In(time.FixedZone("X", 5*3600+30*60))},
		{"now", now},
		{"now+1us", now.Add(time.Microsecond)},
		{"year-9999", time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
	}
}

// MaxBatchPayloadBytes is driver.MaxBatchPayloadBytes (512 ×
// journal.MaxPayloadBytes, 32 MiB), restated because the corpus sits below
// the driver package; the suite checks the two agree.
const MaxBatchPayloadBytes = 512 * journal.MaxPayloadBytes

// BatchTotals are the summed compact payload bytes of one RunEnqueue or
// JournalAppend call, one past the bound first and then at it (so a store
// holds the accepted 32 MiB only after the refusal is checked).
func BatchTotals() []Int {
	return []Int{
		{"batch-payload-past-limit", MaxBatchPayloadBytes + 1},
		{"batch-payload-at-limit", MaxBatchPayloadBytes},
	}
}

// BatchPayloads is a batch of valid payloads whose compact forms total
// exactly total bytes, each at most journal.MaxPayloadBytes: full-size
// JSON strings, then the remainder (a one-digit number for 1 byte).
func BatchPayloads(total int) [][]byte {
	var out [][]byte
	for ; total >= journal.MaxPayloadBytes; total -= journal.MaxPayloadBytes {
		out = append(out, jsonString(journal.MaxPayloadBytes))
	}
	switch {
	case total == 1:
		out = append(out, []byte("1"))
	case total > 1:
		out = append(out, jsonString(total))
	}
	return out
}
