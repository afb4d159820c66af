package driver

import (
	"context"
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
	// key again returns it unchanged).
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
