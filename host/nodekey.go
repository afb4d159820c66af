package host

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// KeyFileError is a node key file that cannot be used: its permissions let
// others read it, or it does not hold an ed25519 private key. Nothing is
// written. It matches lease.ErrInvalid.
type KeyFileError struct {
	Path    string
	Problem string
}

func (e *KeyFileError) Error() string { return fmt.Sprintf("node key file %s: %s", e.Path, e.Problem) }

// Unwrap makes errors.Is(err, lease.ErrInvalid) true.
func (e *KeyFileError) Unwrap() error { return lease.ErrInvalid }

// LoadOrCreateKey reads the node's ed25519 private key from path (PEM,
// PKCS #8), creating it on first start with mode 0600. A file whose mode
// lets its group or others in (any of 0077) is refused, as ssh refuses a
// loose private key: whoever reads it can sign as the node.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, &KeyFileError{Path: path, Problem: fmt.Sprintf("mode %04o lets others read the key; chmod 600 it", st.Mode().Perm())}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, &KeyFileError{Path: path, Problem: "no PEM \"PRIVATE KEY\" block"}
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, &KeyFileError{Path: path, Problem: err.Error()}
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, &KeyFileError{Path: path, Problem: fmt.Sprintf("a %T, not an ed25519 key", k)}
	}
	return ek, nil
}

// createKey writes a new key with O_EXCL, so two processes starting at
// once cannot both create one and go on with different keys.
func createKey(path string) (ed25519.PrivateKey, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	err = writeKey(path, k)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateKey(path)
	}
	if err != nil {
		return nil, err
	}
	return k, nil
}

// writeKey writes k to a new file at path (mode 0600, synced); fs.ErrExist
// if there is one.
func writeKey(path string, k ed25519.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// registerKey registers the node's public key (Config.Key, or one made
// now) before the host holds anything, so every grant to the node from
// here on carries it.
func (h *Host) registerKey(ctx context.Context) error {
	ks, ok := h.cfg.Store.(driver.NodeKeyStore)
	if !ok {
		return nil
	}
	k := h.cfg.Key
	if k == nil {
		var err error
		if _, k, err = ed25519.GenerateKey(rand.Reader); err != nil {
			return err
		}
	}
	if _, err := ks.NodeKeyRegister(ctx, &driver.NodeKeyRegisterParams{Node: h.cfg.Node, PublicKey: k.Public().(ed25519.PublicKey)}); err != nil {
		return fmt.Errorf("host %s: registering the node key: %w", h.cfg.Node, err)
	}
	h.key = k
	return nil
}
