package programs_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
)

// fold decides and applies cmds on a fresh state of p.
func fold(t *testing.T, p host.Program, cmds ...string) host.State {
	s := p.New()
	for _, c := range cmds {
		d, err := s.Decide(host.Command{Key: c, Payload: json.RawMessage(c)})
		require.NoError(t, err)
		for _, ev := range d.Events {
			require.NoError(t, s.Apply(ev))
		}
	}
	return s
}

// TestSnapshotRoundTrips: a restored state is the folded one, and
// decides the next command alike.
func TestSnapshotRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		p    host.Program
		cmds []string
		next string
	}{
		{programs.Bank{}, []string{`{"op":"deposit","account":"a","amount":7}`, `{"op":"transfer","from":"a","to":"b","amount":3}`},
			`{"op":"withdraw","account":"a","amount":5}`},
		{programs.KV{}, []string{`{"op":"put","key":"x","value":{"n":1}}`, `{"op":"put","key":"y","value":2}`, `{"op":"delete","key":"y"}`},
			`{"op":"cas","key":"x","expect":{"n":1},"value":3}`},
	} {
		t.Run(tc.p.Name(), func(t *testing.T) {
			s := fold(t, tc.p, tc.cmds...)
			data, err := s.(host.Snapshotter).Snapshot()
			require.NoError(t, err)
			r := tc.p.New()
			require.NoError(t, r.(host.Snapshotter).Restore(data))
			require.Equal(t, s, r)
			want, err := s.Decide(host.Command{Key: "n", Payload: json.RawMessage(tc.next)})
			require.NoError(t, err)
			got, err := r.Decide(host.Command{Key: "n", Payload: json.RawMessage(tc.next)})
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

// TestRestoreRefusesWhatNoFoldMakes: a snapshot that breaks the state's
// rules is refused (the host then replays the journal instead).
func TestRestoreRefusesWhatNoFoldMakes(t *testing.T) {
	for _, tc := range []struct {
		p    host.Program
		data string
	}{
		{programs.Bank{}, `{"Balances":{"a":-1},"Total":-1}`},
		{programs.Bank{}, `{"Balances":{"a":5},"Total":4}`},
		{programs.Bank{}, `{"Balances":{},"Total":0,"Extra":1}`},
		{programs.Bank{}, `not json`},
		{programs.KV{}, `{"Values":{"k":null}}`},
		{programs.KV{}, `{"Values":{}} {}`},
	} {
		s := tc.p.New()
		require.Error(t, s.(host.Snapshotter).Restore([]byte(tc.data)), "%s %s", tc.p.Name(), tc.data)
		require.Equal(t, tc.p.New(), s, "a refused restore leaves the state as it was")
	}
}
