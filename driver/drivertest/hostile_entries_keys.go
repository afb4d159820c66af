package drivertest

import (
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// The node key registry's entry points (NodeKeyRegister, NodeKeyGet) and
// the signed append's position: each call names its own node n<n>.

// keyIs requires node's current key to be pub.
func (x *hx) keyIs(node string, pub []byte) error {
	k, err := x.d.NodeKeyGet(x.ctx, &driver.NodeKeyGetParams{Node: node})
	if err != nil {
		return err
	}
	return sameBytes("public_key", k.PublicKey, pub)
}

func keyEntries() []hostileEntry {
	pub, _ := seeded(7)
	register := func(x *hx, node string, key []byte) error {
		return ignore(x.d.NodeKeyRegister(x.ctx, &driver.NodeKeyRegisterParams{Node: node, PublicKey: key}))
	}
	return []hostileEntry{
		str("NodeKeyRegister.node", func(x *hx, v string) hostileCall {
			return hostileCall{func() error { return register(x, v, pub) }, func() error { return x.keyIs(v, pub) }}
		}),
		str("NodeKeyRegister.public_key", func(x *hx, v string) hostileCall {
			// The value's bytes, filled up to a key's 32 with a fixed key's
			// tail: a short value is a well-sized key of hostile bytes, a
			// long one a key of the wrong size.
			key := []byte(v)
			if len(key) < len(pub) {
				key = append(key, pub[len(key):]...)
			}
			return hostileCall{func() error { return register(x, x.node(), key) }, func() error { return x.keyIs(x.node(), key) }}
		}),
		str("NodeKeyGet.node", func(x *hx, v string) hostileCall {
			_ = register(x, v, pub) // refused for a value the rules refuse
			return readOnly(func() error { return ignore(x.d.NodeKeyGet(x.ctx, &driver.NodeKeyGetParams{Node: v})) })
		}),
		num("JournalAppend.position", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			var out []journal.AppendOutcome
			return hostileCall{x.appendReq(journal.AppendRequest{Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note", Position: v}, &out),
				x.appended(x.world(), &out, func(*journal.Entry) error { return nil })}
		}),
	}
}
