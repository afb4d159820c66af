package difftest

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// importMutations turn a world's journal (as SQLite has it) into the
// journal an import op offers both stores: moved to another world and
// re-sealed (a valid import), offered as is (a conflict), or broken in one
// way an import must refuse.
var importMutations = []struct {
	name  string
	apply func(es []journal.Entry, to string) []journal.Entry
}{
	{"move", func(es []journal.Entry, to string) []journal.Entry { return reseal(moved(es, to)) }},
	{"as is", func(es []journal.Entry, _ string) []journal.Entry { return es }},
	{"move, flip a payload byte", func(es []journal.Entry, to string) []journal.Entry {
		es = reseal(moved(es, to))
		if len(es) > 0 {
			p := es[len(es)-1].Payload
			es[len(es)-1].Payload = append(append([]byte{}, p[:len(p)-1]...), p[len(p)-1]^1)
		}
		return es
	}},
	{"move, first entry only", func(es []journal.Entry, to string) []journal.Entry { return reseal(moved(es[:min(1, len(es))], to)) }},
	{"move, an hour ahead", func(es []journal.Entry, to string) []journal.Entry {
		es = moved(es, to)
		for i := range es {
			es[i].StoreTime = es[i].StoreTime.Add(time.Hour)
		}
		return reseal(es)
	}},
	{"move, drop the second entry", func(es []journal.Entry, to string) []journal.Entry {
		es = moved(es, to)
		if len(es) > 2 {
			es = append(es[:1], es[2:]...)
		}
		return es
	}},
	{"move, pretty payload", func(es []journal.Entry, to string) []journal.Entry {
		es = moved(es, to)
		es[len(es)-1].Payload = []byte(" " + string(es[len(es)-1].Payload))
		return reseal(es)
	}},
	{"move, nothing", func([]journal.Entry, string) []journal.Entry { return nil }},
}

// moved is a copy of es written to world to.
func moved(es []journal.Entry, to string) []journal.Entry {
	out := clone(es)
	for i := range out {
		out[i].World = to
	}
	return out
}

// clone is a deep copy of es: each store gets its own, so a driver that
// changed its input could not change the other store's.
func clone(es []journal.Entry) []journal.Entry {
	if es == nil {
		return nil
	}
	out := make([]journal.Entry, len(es))
	for i, e := range es {
		e.Payload = append([]byte{}, e.Payload...)
		e.PrevHash = append([]byte(nil), e.PrevHash...)
		e.Hash = append([]byte(nil), e.Hash...)
		out[i] = e
	}
	return out
}

// reseal recomputes the hash chain.
func reseal(es []journal.Entry) []journal.Entry {
	for i := range es {
		es[i].PrevHash = nil
		if i > 0 {
			es[i].PrevHash = es[i-1].Hash
		}
		journal.Seal(&es[i])
	}
	return es
}

func decodeImport(ctx context.Context, in *input, ref *side) step {
	src, to := from(in, worlds), from(in, worlds)
	m := from(in, importMutations)
	home, term := "", time.Duration(0)
	if in.pick(3) == 0 {
		home, term = from(in, holders), from(in, durations)
	}
	es, err := ref.d.JournalRead(ctx, &driver.JournalReadParams{World: src, From: 1, Limit: 1000})
	if err != nil || len(es) == 0 {
		es = nil
	} else {
		es = m.apply(es, to)
	}
	return step{desc: fmt.Sprintf("import %q as %q (%s, %d entries) home=%q term=%s", src, to, m.name, len(es), home, term),
		run: func(ctx context.Context, sd *side) string {
			w, err := sd.d.JournalImport(ctx, &driver.JournalImportParams{Entries: clone(es), Home: home, DefaultTerm: term})
			return sd.result(world(w), err)
		}}
}
