package runs

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
)

// Input limits for runs.
const (
	MaxPayloadBytes   = 64 << 10 // compact JSON per run (and per result)
	MaxQueueBytes     = 128
	MaxUniqueKeyBytes = 256
	MaxReasonBytes    = journal.MaxReasonBytes
	MaxAttemptsLimit  = 1000
	MaxPriority       = 1000 // priorities are 0..MaxPriority; lower is claimed first
	MaxDelay          = 365 * 24 * time.Hour
	MaxLease          = 24 * time.Hour
	MaxClaimBatch     = 1000
	DefaultAttempts   = 25
	// DefaultMaxSnoozes is how often a run may snooze before a snooze
	// fails its attempt instead (WorkerConfig.MaxSnoozes).
	DefaultMaxSnoozes = 100
	MaxSnoozesLimit   = 1_000_000
)

// Enqueue is one run to enqueue.
type Enqueue struct {
	Queue       string
	Payload     []byte        // JSON; normalized to compact form
	Priority    int           // 0..MaxPriority, lower first; default 0
	Delay       time.Duration // run no earlier than store now + Delay; default 0
	MaxAttempts int           // default DefaultAttempts
	UniqueKey   string        // optional: a second enqueue with the same key returns the first run
	// UniqueStates are the states in which the run holds its UniqueKey
	// (unique.go): always available, running and blocked; of the final
	// states, by default completed only — so a failed or cancelled run
	// frees its key, and a completed one holds it until the cleaner
	// deletes it (Retention). Nil takes DefaultUniqueStates.
	UniqueStates []State
	// UniquePeriod scopes the key to a period of the store clock: the key
	// is held only by runs enqueued in the same period, counted from the
	// Unix epoch in UTC (24h: one run per UTC day). 0: no period. The
	// bucket is the period's start: one key under two different periods
	// collides where their buckets start together (a daily and an hourly
	// "report" at midnight), so give each schedule its own key.
	UniquePeriod time.Duration
}

// invalid returns a *journal.InputError, which unwraps to lease.ErrInvalid.
func invalid(field, format string, args ...any) error {
	return &journal.InputError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// ValidateQueue checks a queue name (the identifier alphabet of journal.ValidateID).
func ValidateQueue(q string) error {
	if err := journal.ValidateID("queue", q); err != nil {
		return err
	}
	if len(q) > MaxQueueBytes {
		return invalid("queue", "%d bytes is over the limit of %d", len(q), MaxQueueBytes)
	}
	return nil
}

// ValidateEnqueue checks e and fills its defaults, normalizing the payload.
func ValidateEnqueue(e *Enqueue) error {
	if err := ValidateQueue(e.Queue); err != nil {
		return err
	}
	p, err := NormalizePayload("payload", e.Payload)
	if err != nil {
		return err
	}
	e.Payload = p
	if e.Priority < 0 || e.Priority > MaxPriority {
		return invalid("priority", "%d is outside 0..%d", e.Priority, MaxPriority)
	}
	if e.Delay < 0 || e.Delay > MaxDelay {
		return invalid("delay", "%s is outside 0..%s", e.Delay, MaxDelay)
	}
	if e.MaxAttempts == 0 {
		e.MaxAttempts = DefaultAttempts
	}
	if e.MaxAttempts < 1 || e.MaxAttempts > MaxAttemptsLimit {
		return invalid("max_attempts", "%d is outside 1..%d", e.MaxAttempts, MaxAttemptsLimit)
	}
	if len(e.UniqueKey) > MaxUniqueKeyBytes {
		return invalid("unique_key", "%d bytes is over the limit of %d", len(e.UniqueKey), MaxUniqueKeyBytes)
	}
	if err := journal.ValidateKey(e.UniqueKey); err != nil {
		return invalid("unique_key", "%v", err)
	}
	return validateUnique(e)
}

// NormalizePayload validates JSON up to MaxPayloadBytes compact (input up
// to journal.MaxPayloadRawBytes before compaction: journal.NormalizePayload)
// and returns it compact.
func NormalizePayload(field string, p []byte) ([]byte, error) {
	n, err := journal.NormalizePayload(p)
	if err != nil {
		return nil, invalid(field, "%v", err)
	}
	if len(n) > MaxPayloadBytes {
		return nil, invalid(field, "%d bytes of compact JSON is over the limit of %d", len(n), MaxPayloadBytes)
	}
	return n, nil
}

// ValidateLease checks a claim's or renewal's lease term.
func ValidateLease(d time.Duration) error {
	if d <= 0 || d > MaxLease {
		return invalid("lease", "%s is outside (0, %s]", d, MaxLease)
	}
	return nil
}

// ValidateFenced checks the identity of a runner's fenced write.
func ValidateFenced(id, fence int64) error {
	if id <= 0 {
		return invalid("id", "%d is not a run id", id)
	}
	if fence <= 0 {
		return invalid("fence", "%d is not a fence a claim could have issued", fence)
	}
	return nil
}

// ValidateReason checks a failure, block, cancel or reclaim reason: the
// one reason rule of journal.ValidateReason, shared with a world's revoke.
// (The worker makes a handler's error text fit with journal.SafeReason.)
func ValidateReason(r string) error { return journal.ValidateReason("reason", r) }

// ValidateSnooze checks a snooze's delay: 0..MaxDelay, like an enqueue's.
func ValidateSnooze(delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return invalid("delay", "snooze for %s is outside 0..%s", delay, MaxDelay)
	}
	return nil
}

// ValidateMaxSnoozes checks a snooze bound: 1..MaxSnoozesLimit.
func ValidateMaxSnoozes(n int) error {
	if n < 1 || n > MaxSnoozesLimit {
		return invalid("max_snoozes", "%d is outside 1..%d", n, MaxSnoozesLimit)
	}
	return nil
}
