package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// selfSigned writes a fresh self-signed certificate for 127.0.0.1 and its
// key as PEM files, and returns their paths and the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "leasehold test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile, cert
}

// TestServeOverTLS: Serve with Config.TLS (LoadTLS of a self-signed
// certificate) on a real loopback listener answers HTTPS — a client that
// trusts the certificate enqueues and claims with its token; a plain
// HTTP request and a client that does not trust it get nothing — and
// shuts down cleanly.
func TestServeOverTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, cert := selfSigned(t)
	tc, err := server.LoadTLS(certFile, keyFile)
	require.NoError(t, err)
	_, err = server.LoadTLS(keyFile, certFile)
	require.Error(t, err, "swapped files are refused")

	c, err := leasehold.NewClient(t.Context(), stores[0].open(t), leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s, err := server.New(c, server.Config{TLS: tc, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Serve(ctx, ln, 10*time.Second)
		done <- err
	}()

	pool := x509.NewCertPool()
	pool.AddCert(cert)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	b := (&testBundle{c: c, s: s, url: "https://" + ln.Addr().String()}).withToken(t, tr, "admin")
	b.enqueue(t, "q", `{}`)
	got := b.claimOne(t, "q", "o")
	require.Equal(t, int64(1), got.Fence)
	b.anon(t).get(t, "/v1/runs").problem(t, "unauthorized")

	plain := &http.Transport{}
	defer plain.CloseIdleConnections()
	resp, err := (&http.Client{Transport: plain}).Get("http://" + ln.Addr().String() + "/healthz")
	if err == nil { // Go's TLS server answers a plain request 400 and closes
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	}
	untrusting := &http.Transport{}
	defer untrusting.CloseIdleConnections()
	_, err = (&http.Client{Transport: untrusting}).Get(b.url + "/healthz")
	require.Error(t, err, "a client that does not trust the certificate refuses it")

	stop()
	require.NoError(t, <-done)
}
