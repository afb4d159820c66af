package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServeOverTLSWithATokenFromTheCLI: `leasehold serve --tls-cert
// --tls-key` on a store where `leasehold tokens create` minted a token
// first: it mints none of its own, listens on https://, and answers a
// client that trusts the certificate and sends that token.
func TestServeOverTLSWithATokenFromTheCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "lh.db")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))

	var made, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"tokens", "create", "--db", db, "--scope", "read"}, &made, &errOut), errOut.String())
	secret := regexp.MustCompile(`(?m)^(lh_\S+)$`).FindStringSubmatch(made.String())[1]

	out := &lineWatcher{re: regexp.MustCompile(`listening on (https://\S+)`), found: make(chan string, 1)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"serve", "--db", db, "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile}, out, &errOut)
	}()
	var base string
	select {
	case base = <-out.found:
	case c := <-code:
		t.Fatalf("serve exited %d: %s", c, out)
	}
	require.NotContains(t, out.String(), "admin token:", "a live token in the store: none minted")

	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, base+"/readyz", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	stop()
	require.Equal(t, 0, <-code, "%s", out)

	var bad bytes.Buffer
	require.Equal(t, exitUsage, run(context.Background(), []string{"serve", "--db", db, "--tls-cert", certFile}, &bad, &bad), "a cert without its key is a usage error")
}
