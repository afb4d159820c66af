package drivertest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// at builds the entries of the time corpus.
func at(name string, prep func(x *hx, v time.Time) hostileCall) hostileEntry {
	return hostileEntry{name: name, kind: "time", values: timeValues, prepare: func(x *hx, v any) hostileCall { return prep(x, v.(time.Time)) }}
}

// worldRoundTrip marks world entries: every world they leave must survive
// export → audit → import.
func worldRoundTrip(es []hostileEntry) []hostileEntry {
	for i := range es {
		es[i].roundTrip = true
	}
	return es
}

// wholeMS is the documented form of a world's term: whole milliseconds,
// rounded up, as the journal carries it (term_ms) — computed here, not
// with the library's journal.NormalizeTerm.
func wholeMS(d time.Duration) time.Duration {
	if r := d % time.Millisecond; r > 0 {
		return d - r + time.Millisecond
	}
	return d
}

// createFor creates the call's world held by holder when the rules let
// it, else by "h" — so a call naming holder can be accepted for every
// holder the store accepts, and is refused (not_holder) otherwise.
func (x *hx) createFor(holder string) {
	if _, err := x.d.WorldCreate(x.ctx, &driver.WorldCreateParams{World: x.world(), Home: holder, Term: term}); err != nil {
		x.create(x.world(), "h")
	}
}

// holderIs requires world w held by holder.
func (x *hx) holderIs(w, holder string) error {
	got, err := x.d.WorldGet(x.ctx, &driver.WorldGetParams{World: w})
	if err != nil {
		return err
	}
	return sameString("holder", got.Holder, holder)
}

// appended reads back the one entry an append made at position 2 of w.
func (x *hx) appended(w string, out *[]journal.AppendOutcome, check func(e *journal.Entry) error) func() error {
	return func() error {
		es, err := x.d.JournalRead(x.ctx, &driver.JournalReadParams{World: w, From: 2})
		if err != nil || len(es) != 1 || (*out)[0].Position != 2 {
			return fmt.Errorf("%d entries after position 1 (%v), want the append", len(es), err)
		}
		return check(&es[0])
	}
}

// append1 appends one request to the call's world and answers its
// outcome's error (or the call's).
func (x *hx) appendReq(req journal.AppendRequest, out *[]journal.AppendOutcome) func() error {
	return func() error {
		got, err := x.d.JournalAppend(x.ctx, &driver.JournalAppendParams{World: x.world(), Requests: []journal.AppendRequest{req}})
		if err != nil {
			return err
		}
		*out = got
		return got[0].Err
	}
}

// importOf is the journal of a fresh world, renamed imp<n> and resealed,
// with each entry's store time set by at (nil: kept).
func (x *hx) importOf(at func(time.Time) time.Time) []journal.Entry {
	x.create(x.world(), "h")
	es := x.read(x.world())
	var prev []byte
	for i := range es {
		es[i].World = fmt.Sprintf("imp%d", x.n)
		if at != nil {
			es[i].StoreTime = at(es[i].StoreTime)
		}
		es[i].PrevHash = prev
		journal.Seal(&es[i])
		prev = es[i].Hash
	}
	return es
}

func worldEntries() []hostileEntry {
	d := func(x *hx) driver.Driver { return x.d }
	return worldRoundTrip([]hostileEntry{
		str("WorldCreate.world", func(x *hx, v string) hostileCall {
			return hostileCall{func() error {
				return ignore(d(x).WorldCreate(x.ctx, &driver.WorldCreateParams{World: v, Home: "h", Term: term}))
			}, func() error {
				got, err := d(x).WorldGet(x.ctx, &driver.WorldGetParams{World: v})
				if err != nil {
					return err
				}
				return sameString("world", got.World, v)
			}}
		}),
		str("WorldCreate.holder", func(x *hx, v string) hostileCall {
			return hostileCall{func() error {
				return ignore(d(x).WorldCreate(x.ctx, &driver.WorldCreateParams{World: x.world(), Home: "pool", Holder: v, Term: term}))
			}, func() error {
				got, err := d(x).WorldGet(x.ctx, &driver.WorldGetParams{World: x.world()})
				if err != nil {
					return err
				}
				if err := sameString("home", got.Home, "pool"); err != nil {
					return err
				}
				want := v
				if v == "" {
					want = "pool" // documented: none means Home
				}
				return sameString("holder", got.Holder, want)
			}}
		}),
		str("WorldCreate.home", func(x *hx, v string) hostileCall {
			return hostileCall{func() error {
				return ignore(d(x).WorldCreate(x.ctx, &driver.WorldCreateParams{World: x.world(), Home: v, Term: term}))
			}, func() error {
				got, err := d(x).WorldGet(x.ctx, &driver.WorldGetParams{World: x.world()})
				if err != nil {
					return err
				}
				if err := sameString("home", got.Home, v); err != nil {
					return err
				}
				return sameString("holder", got.Holder, v)
			}}
		}),
		str("WorldGet.world", func(x *hx, v string) hostileCall {
			_, _ = d(x).WorldCreate(x.ctx, &driver.WorldCreateParams{World: v, Home: "h", Term: term})
			var got *driver.World
			return hostileCall{func() (err error) {
				got, err = d(x).WorldGet(x.ctx, &driver.WorldGetParams{World: v})
				return err
			}, func() error { return sameString("world", got.World, v) }}
		}),
		str("WorldList.after", func(x *hx, v string) hostileCall {
			return readOnly(func() error { return ignore(d(x).WorldList(x.ctx, &driver.WorldListParams{After: v})) })
		}),
		str("WorldList.home", func(x *hx, v string) hostileCall {
			return readOnly(func() error { return ignore(d(x).WorldList(x.ctx, &driver.WorldListParams{Home: v})) })
		}),
		str("LeaseChange.handoff.to", func(x *hx, v string) hostileCall {
			x.create(x.world(), "h")
			return hostileCall{func() error {
				return ignore(x.change(x.world(), "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
					return journal.PlanHandoff(s, now, "h", v, 1, term)
				}))
			}, func() error { return x.holderIs(x.world(), v) }}
		}),
		str("LeaseChange.grant.holder", func(x *hx, v string) hostileCall {
			x.create(x.world(), "h")
			_, err := x.change(x.world(), "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
				return journal.PlanRevoke(s, now, 1, "for the grant")
			})
			if err != nil {
				x.t.Fatalf("revoke: %v", err)
			}
			return hostileCall{func() error {
				return ignore(x.change(x.world(), "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
					return journal.PlanGrant(s, now, v, 1, term)
				}))
			}, func() error { return x.holderIs(x.world(), v) }}
		}),
		str("LeaseChange.revoke.reason", func(x *hx, v string) hostileCall {
			x.create(x.world(), "h")
			return hostileCall{func() error {
				return ignore(x.change(x.world(), "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
					return journal.PlanRevoke(s, now, 1, v)
				}))
			}, func() error {
				es := x.read(x.world())
				var r journal.Revoked
				if err := json.Unmarshal(es[len(es)-1].Payload, &r); err != nil {
					return err
				}
				return sameString("revoke reason", r.Reason, v)
			}}
		}),
		dur("LeaseChange.renew.term", func(x *hx, v time.Duration) hostileCall {
			x.create(x.world(), "h")
			return hostileCall{func() error {
				return ignore(x.change(x.world(), "renew", func(s journal.State, now time.Time) (journal.Plan, error) {
					return journal.PlanRenew(s, now, "h", 1, v)
				}))
			}, func() error {
				return sameTime("expires_at", x.get(x.world()).ExpiresAt, StartTime.Add(wholeMS(v)))
			}}
		}),
		dur("WorldCreate.term", func(x *hx, v time.Duration) hostileCall {
			return hostileCall{func() error {
				return ignore(d(x).WorldCreate(x.ctx, &driver.WorldCreateParams{World: x.world(), Home: "h", Term: v}))
			}, func() error {
				got := x.get(x.world())
				if want := wholeMS(v); got.DefaultTerm != want {
					return fmt.Errorf("default term reads back %s, want %s", got.DefaultTerm, want)
				}
				return sameTime("expires_at", got.ExpiresAt, StartTime.Add(wholeMS(v)))
			}}
		}),
		num("WorldList.limit", func(x *hx, v int64) hostileCall {
			return readOnly(func() error { return ignore(d(x).WorldList(x.ctx, &driver.WorldListParams{Limit: int(v)})) })
		}),
		num("LeaseScanExpired.limit", func(x *hx, v int64) hostileCall {
			return readOnly(func() error { return ignore(d(x).LeaseScanExpired(x.ctx, &driver.LeaseScanParams{Limit: int(v)})) })
		}),
		num("JournalRead.from", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			var got []journal.Entry
			return hostileCall{func() (err error) {
				got, err = d(x).JournalRead(x.ctx, &driver.JournalReadParams{World: x.world(), From: v})
				return err
			}, func() error {
				if len(got) > 0 && got[0].Position != v {
					return fmt.Errorf("read from %d starts at %d", v, got[0].Position)
				}
				return nil
			}}
		}),
		num("JournalRead.limit", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			return readOnly(func() error {
				return ignore(d(x).JournalRead(x.ctx, &driver.JournalReadParams{World: x.world(), From: 1, Limit: int(v)}))
			})
		}),
		num("JournalAppend.seen_position", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			var out []journal.AppendOutcome
			return hostileCall{x.appendReq(journal.AppendRequest{Holder: "h", Epoch: 1, SeenPosition: v, Kind: "note"}, &out),
				x.appended(x.world(), &out, func(*journal.Entry) error { return nil })}
		}),
		str("JournalAppend.holder", func(x *hx, v string) hostileCall {
			x.createFor(v)
			var out []journal.AppendOutcome
			return hostileCall{x.appendReq(journal.AppendRequest{Holder: v, Epoch: 1, SeenPosition: 1, Kind: "note"}, &out),
				x.appended(x.world(), &out, func(e *journal.Entry) error { return sameString("holder", e.Holder, v) })}
		}),
		num("JournalAppend.epoch", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			var out []journal.AppendOutcome
			return hostileCall{x.appendReq(journal.AppendRequest{Holder: "h", Epoch: v, SeenPosition: 1, Kind: "note"}, &out),
				x.appended(x.world(), &out, func(e *journal.Entry) error {
					if e.Epoch != v {
						return fmt.Errorf("epoch %d, want %d", e.Epoch, v)
					}
					return nil
				})}
		}),
		num("LeaseChange.handoff.epoch", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			return hostileCall{func() error {
				return ignore(x.change(x.world(), "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
					return journal.PlanHandoff(s, now, "h", "g", v, term)
				}))
			}, func() error {
				got := x.get(x.world())
				if got.Epoch != v+1 || got.Holder != "g" {
					return fmt.Errorf("epoch %d held by %q, want %d held by g", got.Epoch, got.Holder, v+1)
				}
				return nil
			}}
		}),
		str("LeaseChange.renew.holder", func(x *hx, v string) hostileCall {
			x.createFor(v)
			return hostileCall{func() error {
				return ignore(x.change(x.world(), "renew", func(s journal.State, now time.Time) (journal.Plan, error) {
					return journal.PlanRenew(s, now, v, 1, term)
				}))
			}, func() error { return x.holderIs(x.world(), v) }}
		}),
		str("JournalAppend.kind", func(x *hx, v string) hostileCall {
			x.create(x.world(), "h")
			var out []journal.AppendOutcome
			return hostileCall{x.appendReq(journal.AppendRequest{Holder: "h", Epoch: 1, SeenPosition: 1, Kind: journal.Kind(v)}, &out),
				x.appended(x.world(), &out, func(e *journal.Entry) error { return sameString("kind", string(e.Kind), v) })}
		}),
		str("JournalAppend.key", func(x *hx, v string) hostileCall {
			x.create(x.world(), "h")
			var out []journal.AppendOutcome
			return hostileCall{x.appendReq(journal.AppendRequest{Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note", Key: v}, &out),
				x.appended(x.world(), &out, func(e *journal.Entry) error { return sameString("key", e.Key, v) })}
		}),
		js("JournalAppend.payload", func(x *hx, v []byte) hostileCall {
			x.create(x.world(), "h")
			var out []journal.AppendOutcome
			return hostileCall{x.appendReq(journal.AppendRequest{Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: v}, &out),
				x.appended(x.world(), &out, func(e *journal.Entry) error {
					return sameBytes("payload", e.Payload, compactOf(v, []byte("null")))
				})}
		}),
		str("JournalImport.home", func(x *hx, v string) hostileCall {
			es := x.importOf(nil)
			return hostileCall{func() error {
				return ignore(d(x).JournalImport(x.ctx, &driver.JournalImportParams{Entries: es, Home: v}))
			}, func() error {
				got, err := d(x).WorldGet(x.ctx, &driver.WorldGetParams{World: es[0].World})
				if err != nil {
					return err
				}
				want := v
				if v == "" {
					want = "h" // documented: none means the first grant's holder
				}
				return sameString("home", got.Home, want)
			}}
		}),
		dur("JournalImport.default_term", func(x *hx, v time.Duration) hostileCall {
			es := x.importOf(nil)
			return hostileCall{func() error {
				return ignore(d(x).JournalImport(x.ctx, &driver.JournalImportParams{Entries: es, DefaultTerm: v}))
			}, func() error {
				got, err := d(x).WorldGet(x.ctx, &driver.WorldGetParams{World: es[0].World})
				if err != nil {
					return err
				}
				want := wholeMS(v)
				if v == 0 {
					want = term // documented: 0 means the first grant's term
				}
				if got.DefaultTerm != want {
					return fmt.Errorf("default term reads back %s, want %s", got.DefaultTerm, want)
				}
				return nil
			}}
		}),
		at("JournalImport.store_time", func(x *hx, v time.Time) hostileCall {
			es := x.importOf(func(time.Time) time.Time { return v })
			return hostileCall{func() error {
				return ignore(d(x).JournalImport(x.ctx, &driver.JournalImportParams{Entries: es}))
			}, func() error {
				got, err := d(x).JournalRead(x.ctx, &driver.JournalReadParams{World: es[0].World, From: 1})
				if err != nil {
					return err
				}
				return sameEntries(es, got)
			}}
		}),
	})
}
