package drivertest

import (
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// The world snapshot entry points (WorldSnapshotPut, WorldSnapshotGet):
// each call snapshots its own world w<n> at its first entry (the grant),
// whose hash it reads first. The data is opaque bytes the store never
// reads (any value is accepted), so it is no entry point of the corpus;
// the conformance cases bound its size.

// snapshotAt1 is a put of world w at position 1 with the entry's hash
// (a zero hash if w has no entry: the put is then refused).
func (x *hx) snapshotAt1(w string) driver.WorldSnapshotPutParams {
	p := driver.WorldSnapshotPutParams{World: w, Program: "kv", Epoch: 1, Position: 1, EntryHash: make([]byte, 32), Data: []byte("s")}
	if got, err := x.d.WorldGet(x.ctx, &driver.WorldGetParams{World: w}); err == nil && got.Position == 1 {
		p.EntryHash = got.LastHash
	}
	return p
}

// snapshotIs requires w's snapshot to be p.
func (x *hx) snapshotIs(p driver.WorldSnapshotPutParams) error {
	got, err := x.d.WorldSnapshotGet(x.ctx, &driver.WorldSnapshotGetParams{World: p.World})
	if err != nil {
		return err
	}
	if got.Program != p.Program || got.Position != p.Position {
		return fmt.Errorf("snapshot reads back %s at %d, want %s at %d", got.Program, got.Position, p.Program, p.Position)
	}
	if err := sameBytes("entry_hash", got.EntryHash, p.EntryHash); err != nil {
		return err
	}
	return sameBytes("data", got.Data, p.Data)
}

func snapshotEntries() []hostileEntry {
	put := func(x *hx, p driver.WorldSnapshotPutParams) hostileCall {
		return hostileCall{func() error { return x.d.WorldSnapshotPut(x.ctx, &p) }, func() error { return x.snapshotIs(p) }}
	}
	return []hostileEntry{
		str("WorldSnapshotPut.world", func(x *hx, v string) hostileCall {
			_, _ = x.d.WorldCreate(x.ctx, &driver.WorldCreateParams{World: v, Home: "h", Term: term}) // refused for a value the rules refuse
			return put(x, x.snapshotAt1(v))
		}),
		str("WorldSnapshotPut.program", func(x *hx, v string) hostileCall {
			x.create(x.world(), "h")
			p := x.snapshotAt1(x.world())
			p.Program = v
			return put(x, p)
		}),
		num("WorldSnapshotPut.position", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			p := x.snapshotAt1(x.world())
			p.Position = v
			return put(x, p)
		}),
		num("WorldSnapshotPut.epoch", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			p := x.snapshotAt1(x.world())
			p.Epoch = v
			return put(x, p)
		}),
		str("WorldSnapshotGet.world", func(x *hx, v string) hostileCall {
			if _, err := x.d.WorldCreate(x.ctx, &driver.WorldCreateParams{World: v, Home: "h", Term: term}); err == nil {
				p := x.snapshotAt1(v)
				_ = x.d.WorldSnapshotPut(x.ctx, &p)
			}
			return readOnly(func() error { return ignore(x.d.WorldSnapshotGet(x.ctx, &driver.WorldSnapshotGetParams{World: v})) })
		}),
	}
}
