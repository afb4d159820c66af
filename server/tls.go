package server

import (
	"crypto/tls"
	"fmt"
)

// LoadTLS reads a PEM certificate (chain) and key for Config.TLS
// (`leasehold serve --tls-cert F --tls-key F`): TLS 1.2 at least, HTTP/2
// offered.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("server: loading the TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, nil
}
