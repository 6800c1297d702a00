package brokerstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a throw-away CA with a server certificate for 127.0.0.1 and a
// client certificate, written as PEM files in a test's temporary directory.
type PKI struct {
	CAFile         string // PEM of the CA
	ClientCertFile string // PEM client certificate signed by the CA
	ClientKeyFile  string // its key
	serverCert     tls.Certificate
	pool           *x509.CertPool
}

// NewPKI creates the PKI.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "streamer test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p := &PKI{CAFile: filepath.Join(dir, "ca.pem"), pool: x509.NewCertPool()}
	p.pool.AddCert(caCert)
	writePEM(t, p.CAFile, "CERTIFICATE", caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "localhost"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips, DNSNames: []string{"localhost"},
			KeyUsage: x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	sDER, sKey := issue(2, x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.serverCert = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	cDER, cKey := issue(3, x509.ExtKeyUsageClientAuth, nil)
	p.ClientCertFile, p.ClientKeyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	writePEM(t, p.ClientCertFile, "CERTIFICATE", cDER)
	keyDER, _ := x509.MarshalECPrivateKey(cKey)
	writePEM(t, p.ClientKeyFile, "EC PRIVATE KEY", keyDER)
	return p
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ServerTLS is the broker side: it requires a client certificate signed by
// the CA (mutual TLS).
func (p *PKI) ServerTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientCAs: p.pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}
