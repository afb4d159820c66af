package journal

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestAppendKeyAppliedOnce: the key rule at the journal's level (issue 17,
// defect 12): a key seen earlier in the batch or in the store answers its
// first position and adds no entry; the empty key is no key; and an audit
// refuses a journal holding one key twice.
func TestAppendKeyAppliedOnce(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p, _ := PlanCreate("w", "home", 30*time.Second, t0)
	s := p.After
	never := func(string) bool { return false }
	req := func(key string) AppendRequest {
		return AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Key: key}
	}
	stored := func(key string) (int64, bool) { return 7, key == "old" }
	plan, out := PlanAppendKeyed(s, t0, []AppendRequest{req("k"), req(""), req("k"), req(""), req("old")}, never, stored)
	got := []int64{out[0].Position, out[1].Position, out[2].Position, out[3].Position, out[4].Position}
	if want := []int64{2, 3, 2, 4, 7}; !equal(got, want) {
		t.Fatalf("positions %v, want %v", got, want)
	}
	if len(plan.Entries) != 3 {
		t.Fatalf("%d entries, want 3", len(plan.Entries))
	}
	entries := append([]Entry{p.Entries[0]}, plan.Entries...)
	if rep := Audit(entries); !rep.OK() {
		t.Fatal(rep.Violation)
	}
	// A journal that holds key k twice is refused by the audit (and so by
	// import).
	dup, _ := PlanAppend(plan.After, t0, []AppendRequest{{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note"}}, never)
	e := dup.Entries[0]
	e.Key = "k"
	Seal(&e)
	rep := Audit(append(entries, e))
	if rep.OK() || rep.Violation.Rule != "duplicate_key" || !errors.Is(rep.Violation, lease.ErrCorrupt) {
		t.Fatalf("duplicate key: %+v", rep.Violation)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
