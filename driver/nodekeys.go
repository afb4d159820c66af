package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// NodeKeyStore is the registry of nodes' public keys (SPEC §4, "Node
// identity and signatures"; journal/sign.go). A node registers the ed25519
// public key it signs with; a grant or handoff to the node carries its
// newest key (journal.BindKeys, inside the lease change's transaction),
// and from then on the store refuses that epoch's appends unless they are
// signed with it.
type NodeKeyStore interface {
	// NodeKeyRegister makes p.PublicKey p.Node's current key: a new
	// version, unless it is the current key already (registering the same
	// key again returns it unchanged). A key the node has retired (an
	// older version) is refused with a *KeyRetiredError and nothing
	// changes: a rotation is one way, so a host started with the key file
	// a rotation replaced cannot quietly bring the old key back.
	NodeKeyRegister(ctx context.Context, p *NodeKeyRegisterParams) (*NodeKey, error)
	// NodeKeyGet returns p.Node's current key; ErrNotFound if it has none.
	NodeKeyGet(ctx context.Context, p *NodeKeyGetParams) (*NodeKey, error)
}

// NodeKey is one registered version of a node's key.
type NodeKey struct {
	Node         string
	Version      int64 // 1, 2, … in registration order
	PublicKey    []byte
	RegisteredAt time.Time // store clock
}

// KeyRetiredError is a registration of a key the node has rotated away
// from. It matches lease.ErrConflict.
type KeyRetiredError struct {
	Node    string
	Version int64 // the retired key's version
	Current int64 // the node's current version
}

func (e *KeyRetiredError) Error() string {
	return fmt.Sprintf("node %s: the key is version %d, retired (the current key is version %d): a rotated key is never registered again",
		e.Node, e.Version, e.Current)
}

// Unwrap makes errors.Is(err, lease.ErrConflict) true.
func (e *KeyRetiredError) Unwrap() error { return lease.ErrConflict }

// NodeKeyRegisterParams registers a node's public key.
type NodeKeyRegisterParams struct {
	Node      string
	PublicKey []byte // ed25519, 32 bytes
}

// Class implements lease.Classed: the key decides which appends the store
// accepts, so it is written like a lease.
func (*NodeKeyRegisterParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the node and the key's size.
func (p *NodeKeyRegisterParams) Validate() error {
	if err := journal.ValidateID("node", p.Node); err != nil {
		return err
	}
	return journal.ValidatePublicKey(p.PublicKey)
}

// NodeKeyGetParams names a node.
type NodeKeyGetParams struct{ Node string }

// Validate checks the node.
func (p *NodeKeyGetParams) Validate() error { return journal.ValidateID("node", p.Node) }
