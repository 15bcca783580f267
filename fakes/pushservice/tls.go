package pushservice

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
	"time"
)

// authority is the service's own certificate authority, made in memory
// for one service: the certificate it serves under, for 127.0.0.1, and
// the pool a client trusts it with.
type authority struct {
	serving tls.Certificate
	pool    *x509.CertPool
	pem     []byte // the CA's certificate, PEM-encoded
}

// newAuthority makes a CA and a serving certificate for 127.0.0.1 and
// localhost it signed, valid from an hour ago for a day (by the real
// clock: TLS does not read the test's).
func newAuthority() (authority, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return authority{}, err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fake push service CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return authority{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return authority{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return authority{}, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return authority{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return authority{serving: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool: pool,
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}, nil
}
