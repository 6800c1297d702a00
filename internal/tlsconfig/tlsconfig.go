// Package tlsconfig builds the TLS configuration of a client from PEM
// files, for the Kafka brokers and the schema registry alike.
package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Files names what a TLS client trusts and presents. Errors name the
// field by the end of its configuration key (ca_file, cert_file), for the
// caller to put the section before it.
type Files struct {
	CAFile             string // PEM CA bundle; empty: the system roots
	CertFile           string // PEM client certificate, for mutual TLS
	KeyFile            string // PEM key of CertFile
	ServerName         string // overrides the name checked in the server certificate
	InsecureSkipVerify bool
}

// Load reads the files into a client configuration of TLS 1.2 or later.
func (f Files) Load() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName, InsecureSkipVerify: f.InsecureSkipVerify} //nolint:gosec // opt-in
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file: no certificate in %s", f.CAFile)
		}
		cfg.RootCAs = pool
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("cert_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
