package driver

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
)

// Import is a journal verified for import: its final state, its home and
// default term, and the rejection markers its append.rejected entries imply.
type Import struct {
	Final       journal.State
	Home        string
	DefaultTerm time.Duration
	Rejections  []Rejection
}

// Rejection marks that an append.rejected for Holder was journaled in Epoch.
type Rejection struct {
	Epoch  int64
	Holder string
}

// PrepareImport verifies a journal for import with the Auditor (hash chain,
// lease fold, one rejection per holder per epoch) and derives what a driver
// writes besides the entries. Drivers call it; nothing unverified is stored.
func PrepareImport(p *JournalImportParams) (*Import, error) {
	if len(p.Entries) == 0 {
		return nil, &journal.InputError{Field: "entries", Problem: "an import needs at least one entry"}
	}
	a := journal.NewAuditor()
	var rs []Rejection
	for i := range p.Entries {
		e := &p.Entries[i]
		// A store time finer than the store keeps would be stored cut and
		// read back as another time than the journal given (both stores
		// keep microseconds), so it is refused, not rounded.
		if !e.StoreTime.Equal(journal.NormalizeTime(e.StoreTime)) {
			return nil, &journal.InputError{Field: "entries", Problem: fmt.Sprintf(
				"position %d: store time %s is finer than the store's resolution of %s", e.Position, e.StoreTime.Format(time.RFC3339Nano), journal.StoreTimeResolution)}
		}
		if err := a.Add(e); err != nil {
			return nil, fmt.Errorf("import of world %q refused: %w", e.World, err)
		}
		if e.Kind == journal.KindRejected {
			var r journal.Rejected
			if err := jsonUnmarshal(e.Payload, &r); err != nil {
				return nil, err
			}
			rs = append(rs, Rejection{Epoch: e.Epoch, Holder: r.Holder})
		}
	}
	first := p.Entries[0]
	var g journal.Granted
	if err := jsonUnmarshal(first.Payload, &g); err != nil || first.Kind != journal.KindGranted {
		return nil, &journal.InputError{Field: "entries", Problem: "position 1 must be lease.granted"}
	}
	imp := &Import{Final: a.Report().Final, Home: p.Home, DefaultTerm: p.DefaultTerm, Rejections: rs}
	if imp.Home == "" {
		imp.Home = g.Holder
	}
	if imp.DefaultTerm == 0 {
		imp.DefaultTerm = time.Duration(g.TermMS) * time.Millisecond
	}
	// The sweep grants to Home for DefaultTerm: an import must not create a
	// world the sweep could never re-grant.
	if err := journal.ValidateID("home", imp.Home); err != nil {
		return nil, err
	}
	if err := journal.ValidateTerm(imp.DefaultTerm); err != nil {
		return nil, err
	}
	imp.DefaultTerm = journal.NormalizeTerm(imp.DefaultTerm) // as WorldCreate keeps it
	return imp, nil
}

// CheckTime refuses a journal whose last store time is after the store's
// now. Store times are the store's clock; an entry "from the future" would
// keep its lease alive past its term on the store clock (and every later
// entry would be stamped no earlier than it).
func (imp *Import) CheckTime(now time.Time) error {
	if imp.Final.LastTime.After(now) {
		return &journal.InputError{Field: "entries", Problem: fmt.Sprintf(
			"the last entry's store time %s is after the store's now %s", imp.Final.LastTime.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))}
	}
	return nil
}
