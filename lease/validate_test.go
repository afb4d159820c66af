package lease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

func TestValidateRules(t *testing.T) {
	t.Parallel()
	with := func(change func(*lease.Timing)) lease.Timing {
		tm := lease.RunDefaults()
		change(&tm)
		return tm
	}
	tests := []struct {
		name  string
		in    lease.Timing
		field string
		want  string // the whole message, values included
	}{
		{"zero lease", with(func(t *lease.Timing) { t.Lease = 0 }), "T_lease",
			"lease timing: T_lease (0s) must be > 0: every lease timing is a positive duration"},
		{"negative renew", with(func(t *lease.Timing) { t.Renew = -time.Second }), "T_renew",
			"lease timing: T_renew (-1s) must be > 0: every lease timing is a positive duration"},
		{"zero drain", with(func(t *lease.Timing) { t.Drain = 0 }), "T_drain",
			"lease timing: T_drain (0s) must be > 0: every lease timing is a positive duration"},
		{"zero stop", with(func(t *lease.Timing) { t.Stop = 0 }), "D_stop",
			"lease timing: D_stop (0s) must be > 0: every lease timing is a positive duration"},
		{"zero skew", with(func(t *lease.Timing) { t.Skew = 0 }), "S",
			"lease timing: S (0s) must be > 0: every lease timing is a positive duration"},
		{"zero poll", with(func(t *lease.Timing) { t.Poll = 0 }), "P",
			"lease timing: P (0s) must be > 0: every lease timing is a positive duration"},
		{"zero margin", with(func(t *lease.Timing) { t.Margin = 0 }), "margin",
			"lease timing: margin (0s) must be > 0: every lease timing is a positive duration"},
		{"absurd lease", with(func(t *lease.Timing) { t.Lease = 25 * time.Hour }), "T_lease",
			"lease timing: T_lease (25h0m0s) must be <= 24h0m0s: a longer value is absurd (a unit mistake?)"},
		{"absurd poll", with(func(t *lease.Timing) { t.Poll = 24*time.Hour + 1 }), "P",
			"lease timing: P (24h0m0.000000001s) must be <= 24h0m0s: a longer value is absurd (a unit mistake?)"},
		{"stop plus skew reaches lease", with(func(t *lease.Timing) { t.Skew = 50 * time.Second }), "D_stop",
			"lease timing: D_stop (45s) + S (50s) = 1m35s must be < T_lease (1m30s): a holder must stop itself before anyone may reclaim"},
		{"stop plus skew equals lease", with(func(t *lease.Timing) { t.Stop = 75 * time.Second }), "D_stop",
			"lease timing: D_stop (1m15s) + S (15s) = 1m30s must be < T_lease (1m30s): a holder must stop itself before anyone may reclaim"},
		{"renew plus drain reaches stop", with(func(t *lease.Timing) { t.Renew = 40 * time.Second }), "T_renew",
			"lease timing: T_renew (40s) + T_drain (5s) = 45s must be < D_stop (45s): normal upkeep must never look like lag"},
	}
	for _, tc := range tests {
		err := tc.in.Validate()
		require.ErrorIs(t, err, lease.ErrInvalidTiming, tc.name)
		require.EqualError(t, err, tc.want, tc.name)
		var te *lease.TimingError
		require.ErrorAs(t, err, &te, tc.name)
		require.Equal(t, tc.field, te.Field, tc.name)
	}
}

func TestValidateJoinsEveryProblem(t *testing.T) {
	t.Parallel()
	err := lease.Timing{Lease: -time.Second, Renew: 48 * time.Hour}.Validate()
	require.ErrorIs(t, err, lease.ErrInvalidTiming)

	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
	var fields []string
	for _, e := range joined.Unwrap() {
		var te *lease.TimingError
		require.ErrorAs(t, e, &te)
		fields = append(fields, te.Field)
	}
	require.Equal(t, []string{"T_lease", "T_renew", "T_drain", "D_stop", "S", "P", "margin"}, fields)
	require.ErrorContains(t, err, "T_lease (-1s) must be > 0")
	require.ErrorContains(t, err, "T_renew (48h0m0s) must be <= 24h0m0s")
}

func TestValidateBothRelations(t *testing.T) {
	t.Parallel()
	tm := lease.RunDefaults()
	tm.Stop = 10 * time.Second
	tm.Skew = 85 * time.Second // 10s + 85s >= 90s, and 15s + 5s >= 10s
	err := tm.Validate()
	require.ErrorIs(t, err, lease.ErrInvalidTiming)
	require.ErrorContains(t, err, "D_stop (10s) + S (1m25s) = 1m35s must be < T_lease (1m30s)")
	require.ErrorContains(t, err, "T_renew (15s) + T_drain (5s) = 20s must be < D_stop (10s)")
}
