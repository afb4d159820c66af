package journal

import (
	"cmp"
	"fmt"
)

// Span is a run of consecutive positions written while one epoch was in
// force, with its holder ("" while the epoch was revoked and nobody held it).
type Span struct {
	Epoch  int64
	Holder string
	From   int64 // first position
	To     int64 // last position
}

// Report is what an audit proved.
type Report struct {
	World   string
	Entries int64
	// Spans cover every position from 1 to Final.Position in order: for each
	// position, the epoch and holder that held the write lease.
	Spans []Span
	Final State
	// Signatures counts the batch signatures verified (journal/sign.go),
	// and Signed the entries they cover.
	Signatures, Signed int64
	// Violation is the first entry that broke the chain or the lease rules;
	// nil when the whole journal verified. Nothing after it is trusted.
	Violation *Violation
}

// OK reports whether the journal verified.
func (r Report) OK() bool { return r.Violation == nil }

// Auditor verifies a journal entry by entry: the hash chain, the canonical
// encoding, the lease fold, and that append.rejected is journaled at most
// once per holder per epoch, and that a non-empty key appears at most once
// in the journal (the key rule of PlanAppendKeyed: a retried append is
// applied once). Feed it entries in order with Add.
type Auditor struct {
	rep      Report
	rejected map[string]bool // holders with an append.rejected in the current epoch
	epoch    int64
	keys     map[string]int64 // the position of each key seen
}

// NewAuditor returns an empty Auditor.
func NewAuditor() *Auditor { return &Auditor{rejected: map[string]bool{}, keys: map[string]int64{}} }

// Add folds e into the audit. After the first violation it returns that
// violation for every call and folds nothing more.
func (a *Auditor) Add(e *Entry) error {
	if a.rep.Violation != nil {
		return a.rep.Violation
	}
	n, err := Fold(a.rep.Final, e)
	if err != nil {
		v, _ := err.(*Violation)
		a.rep.Violation = v
		return v
	}
	if len(e.Signature) > 0 { // Fold verified it
		a.rep.Signatures++
		a.rep.Signed += e.Position - cmp.Or(a.rep.Final.SignFrom, e.Position) + 1
	}
	if n.Epoch != a.epoch {
		a.epoch, a.rejected = n.Epoch, map[string]bool{}
	}
	if e.Kind == KindRejected {
		var p Rejected
		_ = decodeStrict(e.Payload, &p) // Fold has decoded it already
		if a.rejected[p.Holder] {
			a.rep.Violation = &Violation{World: e.World, Position: e.Position, Rule: "rejection_flood",
				Detail: fmt.Sprintf("second append.rejected for %q in epoch %d", p.Holder, n.Epoch)}
			return a.rep.Violation
		}
		a.rejected[p.Holder] = true
	}
	if e.Key != "" {
		if first, ok := a.keys[e.Key]; ok {
			a.rep.Violation = &Violation{World: e.World, Position: e.Position, Rule: "duplicate_key",
				Detail: fmt.Sprintf("key %q was appended at position %d already", e.Key, first)}
			return a.rep.Violation
		}
		a.keys[e.Key] = e.Position
	}
	a.rep.World, a.rep.Final = n.World, n
	a.rep.Entries++
	if k := len(a.rep.Spans); k > 0 && a.rep.Spans[k-1].Epoch == n.Epoch && a.rep.Spans[k-1].Holder == n.Holder {
		a.rep.Spans[k-1].To = n.Position
	} else {
		a.rep.Spans = append(a.rep.Spans, Span{Epoch: n.Epoch, Holder: n.Holder, From: n.Position, To: n.Position})
	}
	return nil
}

// Report returns what the audit proved so far. A journal that ends inside
// a signed batch (entries no signature covers yet) is a violation: a store
// commits a batch whole.
func (a *Auditor) Report() Report {
	r := a.rep
	if r.Violation == nil && r.Final.SignFrom != 0 {
		r.Violation = &Violation{World: r.World, Position: r.Final.SignFrom, Rule: "unsigned",
			Detail: fmt.Sprintf("entries from position %d to the end are covered by no signature", r.Final.SignFrom)}
	}
	return r
}

// Audit verifies entries in order.
func Audit(entries []Entry) Report {
	a := NewAuditor()
	for i := range entries {
		if a.Add(&entries[i]) != nil {
			break
		}
	}
	return a.Report()
}
