package programs

import (
	"encoding/json"
	"fmt"

	"github.com/leasehold/leasehold/host"
)

// Both example states are host.Snapshotters: a spill node that prepares a
// world restores the newest snapshot and replays only the entries after
// it. The encoding is the state's JSON; Restore refuses what a fold could
// not have produced, so a snapshot that is not the journal's (a bug, a
// hand-edited row) is ignored and the journal replayed instead.
var (
	_ host.Snapshotter = (*BankState)(nil)
	_ host.Snapshotter = (*KVState)(nil)
)

// Snapshot encodes the ledger: {"Balances":{…},"Total":n}.
func (s *BankState) Snapshot() ([]byte, error) { return json.Marshal(s) }

// Restore replaces the ledger with a Snapshot's, refusing one that breaks
// the ledger's rules (a negative balance, a Total that is not the sum).
func (s *BankState) Restore(data []byte) error {
	var r BankState
	if err := strictJSON(data, &r); err != nil {
		return fmt.Errorf("bank snapshot: %v", err)
	}
	var sum int64
	for a, b := range r.Balances {
		if b < 0 {
			return fmt.Errorf("bank snapshot: account %s has a negative balance %d", a, b)
		}
		sum += b
	}
	if sum != r.Total {
		return fmt.Errorf("bank snapshot: the balances sum to %d, its total is %d", sum, r.Total)
	}
	if r.Balances == nil {
		r.Balances = map[string]int64{}
	}
	*s = r
	return nil
}

// Snapshot encodes the store: {"Values":{…}}.
func (s *KVState) Snapshot() ([]byte, error) { return json.Marshal(s) }

// Restore replaces the store with a Snapshot's, refusing a null value (a
// fold never stores one: delete removes the key).
func (s *KVState) Restore(data []byte) error {
	var r KVState
	if err := strictJSON(data, &r); err != nil {
		return fmt.Errorf("kv snapshot: %v", err)
	}
	for k, v := range r.Values {
		if len(v) == 0 || string(v) == "null" {
			return fmt.Errorf("kv snapshot: key %q has no value", k)
		}
	}
	if r.Values == nil {
		r.Values = map[string]json.RawMessage{}
	}
	*s = r
	return nil
}
