package leasehold_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// FuzzConfigValidate: Config.Validate refuses exactly an invalid queue name
// and a world timing that (with its defaults) breaks SPEC §1, with errors
// matching ErrInvalid or ErrInvalidTiming. (The store's URL is the
// driver's configuration now; the CLI's redaction is fuzzed in
// cmd/leasehold.)
func FuzzConfigValidate(f *testing.F) {
	f.Add("emails", int64(0), int64(0))
	f.Add("q", int64(30*time.Second), int64(15*time.Second))
	f.Add("", int64(0), int64(0))
	f.Add("a b", int64(-1), int64(0))
	f.Add("q", int64(10*time.Second), int64(20*time.Second))
	f.Fuzz(func(t *testing.T, queue string, leaseNS, stopNS int64) {
		cfg := leasehold.Config{Queues: []string{queue},
			WorldTiming: lease.Timing{Lease: time.Duration(leaseNS), Stop: time.Duration(stopNS)}}
		err := cfg.Validate()

		badQueue := runs.ValidateQueue(queue) != nil
		badTiming := cfg.WorldTiming.WithDefaults(lease.WorldDefaults()).Validate() != nil
		require.Equal(t, badQueue || badTiming, err != nil, "Validate() = %v", err)
		if err == nil {
			return
		}
		require.True(t, errors.Is(err, leasehold.ErrInvalid) || errors.Is(err, leasehold.ErrInvalidTiming), "%v", err)
	})
}
