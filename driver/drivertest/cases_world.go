package drivertest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

var worldCases = []Case{
	{"WorldCreateGrantsHome", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		w := e.create("w1", "home")
		require.Equal(t, int64(1), w.Epoch)
		require.Equal(t, "home", w.Holder)
		require.Equal(t, StartTime.Add(term), w.ExpiresAt)
		require.Equal(t, term, w.DefaultTerm)
		rep := e.audit("w1")
		require.Equal(t, int64(1), rep.Entries)
		require.Equal(t, journal.KindGranted, e.read("w1")[0].Kind)
	}},
	{"WorldCreateTwiceConflicts", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		_, err := e.d.WorldCreate(e.ctx, &driver.WorldCreateParams{World: "w1", Home: "other", Term: term})
		require.ErrorIs(t, err, driver.ErrConflict)
		require.Equal(t, "home", e.get("w1").Holder)
	}},
	{"WorldGetMissingIsNotFound", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		_, err := e.d.WorldGet(e.ctx, &driver.WorldGetParams{World: "nope"})
		require.ErrorIs(t, err, driver.ErrNotFound)
		_, err = e.append1("nope", "a", 1, 1, "x", "{}")
		require.ErrorIs(t, err, driver.ErrNotFound)
	}},
	{"WorldCreateRefusesBadInput", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for _, p := range []driver.WorldCreateParams{
			{World: "", Home: "h", Term: term}, {World: "w 1", Home: "h", Term: term},
			{World: "w", Home: "", Term: term}, {World: "w", Home: "h", Term: -1},
		} {
			_, err := e.d.WorldCreate(e.ctx, &p)
			require.ErrorIs(t, err, driver.ErrInvalid, "%+v", p)
		}
		ws, err := e.d.WorldList(e.ctx, &driver.WorldListParams{})
		require.NoError(t, err)
		require.Empty(t, ws)
	}},
	{"WorldListPages", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for i := range 5 {
			e.create(fmt.Sprintf("w%d", i), "home")
		}
		ws, err := e.d.WorldList(e.ctx, &driver.WorldListParams{Limit: 3})
		require.NoError(t, err)
		require.Len(t, ws, 3)
		ws, err = e.d.WorldList(e.ctx, &driver.WorldListParams{After: ws[2].World, Limit: 3})
		require.NoError(t, err)
		require.Len(t, ws, 2)
		require.Equal(t, "w4", ws[1].World)
	}},
	{"WorldListByHome", func(t *testing.T, f Factory) {
		// The home filter lists exactly the worlds whose Home is the name
		// (not a prefix, not the holder), in id order, paged by After.
		e := newEnv(t, f)
		for i := range 5 {
			e.create(fmt.Sprintf("p%d", i), "pool")
			e.create(fmt.Sprintf("q%d", i), "pool2")
		}
		e.create("a", "poo")
		e.create("z", "pool")
		ids := func(ws []*driver.World) []string {
			out := []string{}
			for _, w := range ws {
				require.Equal(t, "pool", w.Home, w.World)
				out = append(out, w.World)
			}
			return out
		}
		ws, err := e.d.WorldList(e.ctx, &driver.WorldListParams{Home: "pool"})
		require.NoError(t, err)
		require.Equal(t, []string{"p0", "p1", "p2", "p3", "p4", "z"}, ids(ws))
		ws, err = e.d.WorldList(e.ctx, &driver.WorldListParams{Home: "pool", Limit: 4})
		require.NoError(t, err)
		require.Equal(t, []string{"p0", "p1", "p2", "p3"}, ids(ws))
		ws, err = e.d.WorldList(e.ctx, &driver.WorldListParams{Home: "pool", After: ws[3].World, Limit: 4})
		require.NoError(t, err)
		require.Equal(t, []string{"p4", "z"}, ids(ws))
		ws, err = e.d.WorldList(e.ctx, &driver.WorldListParams{Home: "pool", After: "p9"})
		require.NoError(t, err)
		require.Equal(t, []string{"z"}, ids(ws))
		for _, none := range []string{"nobody", "p_ol", "poo", "POOL"} { // exact: never a pattern or a prefix
			ws, err = e.d.WorldList(e.ctx, &driver.WorldListParams{Home: none})
			require.NoError(t, err)
			if none == "poo" {
				require.Len(t, ws, 1)
				require.Equal(t, "a", ws[0].World)
				continue
			}
			require.Empty(t, ws, none)
		}
		all, err := e.d.WorldList(e.ctx, &driver.WorldListParams{})
		require.NoError(t, err)
		require.Len(t, all, 12, "no filter: every world")
		for _, bad := range []string{"a b", "bad\x00\xff", strings.Repeat("h", journal.MaxIDBytes+1), "pool%"} {
			_, err := e.d.WorldList(e.ctx, &driver.WorldListParams{Home: bad})
			require.ErrorIs(t, err, driver.ErrInvalid, "%q", bad)
			var ie *journal.InputError
			require.True(t, errors.As(err, &ie), "%q: %v", bad, err)
		}
	}},
	{"JournalReadRefusesBadRange", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		for _, p := range []driver.JournalReadParams{{World: "w1", From: 0}, {World: "w1", From: -5}, {World: "w1", From: 1, Limit: -1}} {
			_, err := e.d.JournalRead(e.ctx, &p)
			require.ErrorIs(t, err, driver.ErrInvalid)
			var ie *journal.InputError
			require.True(t, errors.As(err, &ie))
		}
		es, err := e.d.JournalRead(e.ctx, &driver.JournalReadParams{World: "w1", From: 2})
		require.NoError(t, err)
		require.Empty(t, es)
	}},
	{"JournalReadMissingWorldIsNotFound", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		_, err := e.d.JournalRead(e.ctx, &driver.JournalReadParams{World: "nope", From: 1})
		require.ErrorIs(t, err, driver.ErrNotFound)
	}},
}
