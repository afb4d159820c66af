package drivertest

// Issue 17, defect 5: reads and lease changes with an id holding NUL or
// invalid UTF-8 are refused alike by both stores (typed ErrInvalid), never
// with Postgres's raw SQLSTATE 22021.

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

func init() {
	inputCases = append(inputCases, Case{"BadIDsOnReadsAndChangesRefusedAlike", caseBadIDsOnReads})
}

func caseBadIDsOnReads(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("w", "home")
	never := func(*driver.World, time.Time) (journal.Plan, error) {
		return journal.Plan{}, errors.New("planner reached")
	}
	for _, bad := range []string{"w\x00", "w\xff"} {
		calls := []struct {
			name string
			call func() error
		}{
			{"world get", func() error { _, err := e.d.WorldGet(e.ctx, &driver.WorldGetParams{World: bad}); return err }},
			{"journal read (audit)", func() error {
				_, err := e.d.JournalRead(e.ctx, &driver.JournalReadParams{World: bad, From: 1})
				return err
			}},
			{"grant", func() error {
				_, err := e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: bad, Op: "grant", Plan: never})
				return err
			}},
			{"renew", func() error {
				_, err := e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: bad, Op: "renew", Plan: never})
				return err
			}},
			{"revoke", func() error {
				_, err := e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: bad, Op: "revoke", Plan: never})
				return err
			}},
			{"worlds after", func() error {
				_, err := e.d.WorldList(e.ctx, &driver.WorldListParams{After: bad, Limit: 10})
				return err
			}},
			{"worlds home", func() error {
				_, err := e.d.WorldList(e.ctx, &driver.WorldListParams{Home: bad, Limit: 10})
				return err
			}},
		}
		for _, c := range calls {
			err := c.call()
			require.ErrorIs(t, err, driver.ErrInvalid, "%s(%q): got %v", c.name, bad, err)
		}
	}
}
