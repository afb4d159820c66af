package host

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// Rotation is what RotateKey did.
type Rotation struct {
	Node string
	Old  *driver.NodeKey // the key retired
	New  *driver.NodeKey // the key now current
	// RetiredFile is where the old key file was moved: kept, not
	// deleted, so an operator can still prove what the node signed with
	// (the journal itself only needs the public keys its grants carry).
	RetiredFile string
}

// RotateKey gives node a new ed25519 key: it makes one, registers its
// public key as the node's next version, and swaps the key file at path
// (the old one is kept as path.v<version>.retired, the new one takes its
// place, mode 0600). The file at path must hold the node's current
// registered key: rotating from any other file would retire a key the
// operator does not hold.
//
// The rotation reaches a world at the node's next grant or handoff
// (journal.BindKeys): entries appended before keep verifying under the key
// their epoch's grant carries, and entries of every later epoch must be
// signed with the new key — one signed with the retired key is refused
// (bad_signature). The retired key is never registered again
// (driver.KeyRetiredError), so a host started with a stale copy of the
// old file fails at its start instead of signing with it.
//
// Run it with the node's host stopped and start the host with the same
// --key path afterwards: a running host keeps the key it loaded, and its
// batches under any epoch granted after the rotation are refused. A
// restarted host never adopts an epoch it finds current (world.Holder),
// so it waits for a grant, which carries the new key.
func RotateKey(ctx context.Context, ks driver.NodeKeyStore, node, path string) (*Rotation, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &KeyFileError{Path: path, Problem: "no key file to rotate (a host started with --key creates one)"}
		}
		return nil, err
	}
	old, err := LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	cur, err := ks.NodeKeyGet(ctx, &driver.NodeKeyGetParams{Node: node})
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(cur.PublicKey, old.Public().(ed25519.PublicKey)) {
		return nil, fmt.Errorf("node key file %s is not node %s's current key (version %d): %w", path, node, cur.Version, lease.ErrConflict)
	}
	retired := fmt.Sprintf("%s.v%d.retired", path, cur.Version)
	next := path + ".new"
	for _, p := range []string{retired, next} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s exists (an interrupted rotation?): move it away first: %w", p, lease.ErrConflict)
		}
	}
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	// The new file first, the registration next, the swap last: until the
	// registration commits nothing has changed but a spare file; after it,
	// the store refuses the old key, so a failed swap is loud (the host
	// refuses to start with the old file), never a silent use of it.
	if err := writeKey(next, k); err != nil {
		return nil, err
	}
	nk, err := ks.NodeKeyRegister(ctx, &driver.NodeKeyRegisterParams{Node: node, PublicKey: k.Public().(ed25519.PublicKey)})
	if err != nil {
		os.Remove(next)
		return nil, fmt.Errorf("node %s: registering the new key: %w", node, err)
	}
	if err := os.Rename(path, retired); err != nil {
		return nil, fmt.Errorf("node %s: the new key (version %d) is registered and in %s, but moving the old file away failed: %w", node, nk.Version, next, err)
	}
	if err := os.Rename(next, path); err != nil {
		return nil, fmt.Errorf("node %s: the new key (version %d) is registered and in %s, but putting it at %s failed: %w", node, nk.Version, next, path, err)
	}
	return &Rotation{Node: node, Old: cur, New: nk, RetiredFile: retired}, nil
}
