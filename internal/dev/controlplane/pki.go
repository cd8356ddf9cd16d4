package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-logr/logr"
)

// Certificate lifetimes. The CA is long-lived because rotating it breaks
// every kubeconfig handed out; leaves are re-issued transparently on start.
const (
	caValidity      = 10 * 365 * 24 * time.Hour
	leafValidity    = 365 * 24 * time.Hour
	renewBefore     = 30 * 24 * time.Hour
	adminCommonName = "shepherd-admin"
	// ProxyClientCommonName is the name in the client certificate the
	// aggregator presents to aggregated API servers (front proxy), the one
	// name the API server's requestheader authentication allows.
	ProxyClientCommonName = "front-proxy-client"
)

// pki holds the paths of the persisted certificates plus the PEM material
// clients need. Everything lives under DataDir/pki so that a restart reuses
// it and previously written kubeconfigs keep working.
type pki struct {
	CACert, CAKey           string
	ServingCert, ServingKey string
	AdminCert, AdminKey     string
	// SAKey signs and verifies service-account tokens (private key file
	// doubles as public key source for the apiserver).
	SAKey string
	// FrontProxyCACert signs ProxyClientCert, the certificate the
	// aggregator proxies requests to aggregated APIs with; it is a CA of
	// its own so that no ordinary client certificate can assert a user in
	// request headers.
	FrontProxyCACert, FrontProxyCAKey string
	ProxyClientCert, ProxyClientKey   string

	CAPEM, AdminCertPEM, AdminKeyPEM []byte
}

// keyPair is a parsed certificate and its key.
type keyPair struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// ensurePKI loads the PKI under dir, creating or re-issuing whatever is
// missing, expiring, or (for the serving cert) lacks a required SAN. The CA
// is only regenerated when it is missing or unusable, which also forces all
// leaves to be re-issued.
func ensurePKI(log logr.Logger, dir string, dnsNames []string, ips []net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating pki dir: %w", err)
	}
	p := &pki{
		CACert: filepath.Join(dir, "ca.crt"), CAKey: filepath.Join(dir, "ca.key"),
		ServingCert: filepath.Join(dir, "apiserver.crt"), ServingKey: filepath.Join(dir, "apiserver.key"),
		AdminCert: filepath.Join(dir, "admin.crt"), AdminKey: filepath.Join(dir, "admin.key"),
		SAKey:            filepath.Join(dir, "sa.key"),
		FrontProxyCACert: filepath.Join(dir, "front-proxy-ca.crt"), FrontProxyCAKey: filepath.Join(dir, "front-proxy-ca.key"),
		ProxyClientCert: filepath.Join(dir, "front-proxy-client.crt"), ProxyClientKey: filepath.Join(dir, "front-proxy-client.key"),
	}

	ca, err := ensureCA(log, "shepherd-hub-ca", p.CACert, p.CAKey)
	if err != nil {
		return nil, err
	}

	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := ensureLeaf(log, ca, p.ServingCert, p.ServingKey, serving); err != nil {
		return nil, err
	}
	admin := &x509.Certificate{
		// O=system:masters makes the apiserver treat this user as
		// cluster-admin without any RBAC bindings.
		Subject:     pkix.Name{CommonName: adminCommonName, Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := ensureLeaf(log, ca, p.AdminCert, p.AdminKey, admin); err != nil {
		return nil, err
	}
	frontProxyCA, err := ensureCA(log, "shepherd-front-proxy-ca", p.FrontProxyCACert, p.FrontProxyCAKey)
	if err != nil {
		return nil, err
	}
	proxyClient := &x509.Certificate{
		Subject:     pkix.Name{CommonName: ProxyClientCommonName},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := ensureLeaf(log, frontProxyCA, p.ProxyClientCert, p.ProxyClientKey, proxyClient); err != nil {
		return nil, err
	}
	if _, err := readKey(p.SAKey); err != nil {
		log.Info("generating service-account signing key", "reason", err.Error())
		if _, err := newKey(p.SAKey); err != nil {
			return nil, err
		}
	}

	for _, f := range []struct {
		dst  *[]byte
		path string
	}{{&p.CAPEM, p.CACert}, {&p.AdminCertPEM, p.AdminCert}, {&p.AdminKeyPEM, p.AdminKey}} {
		if *f.dst, err = os.ReadFile(f.path); err != nil {
			return nil, fmt.Errorf("reading %s: %w", f.path, err)
		}
	}
	return p, nil
}

// ensureLeaf keeps the existing leaf at certPath if it was issued by ca, is
// not close to expiry and covers every SAN in tmpl; otherwise it issues a
// new one from tmpl.
func ensureLeaf(log logr.Logger, ca *keyPair, certPath, keyPath string, tmpl *x509.Certificate) error {
	cur, err := loadKeyPair(certPath, keyPath)
	if err == nil {
		err = leafUsable(cur.cert, ca.cert, tmpl)
	}
	if err == nil {
		return nil
	}
	log.Info("issuing certificate", "path", certPath, "reason", err.Error())
	key, err := newKey(keyPath)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl.SerialNumber, err = randSerial()
	if err != nil {
		return err
	}
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(leafValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return fmt.Errorf("signing %s: %w", certPath, err)
	}
	return writeAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// leafUsable reports why cert cannot be reused, or nil if it can.
func leafUsable(cert, ca *x509.Certificate, want *x509.Certificate) error {
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return fmt.Errorf("not signed by current CA: %w", err)
	}
	if time.Until(cert.NotAfter) < renewBefore {
		return errors.New("expires soon")
	}
	if cert.Subject.CommonName != want.Subject.CommonName ||
		!slices.Equal(cert.Subject.Organization, want.Subject.Organization) {
		return errors.New("subject changed")
	}
	for _, d := range want.DNSNames {
		if !slices.Contains(cert.DNSNames, d) {
			return fmt.Errorf("missing DNS SAN %q", d)
		}
	}
	for _, ip := range want.IPAddresses {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return fmt.Errorf("missing IP SAN %s", ip)
		}
	}
	return nil
}

// ensureCA loads the CA at certPath, or creates one named commonName when
// it is missing, unusable or close to expiry.
func ensureCA(log logr.Logger, commonName, certPath, keyPath string) (*keyPair, error) {
	ca, err := loadKeyPair(certPath, keyPath)
	if err == nil && ca.cert.IsCA && time.Until(ca.cert.NotAfter) >= renewBefore {
		return ca, nil
	}
	log.Info("generating new CA", "path", certPath, "reason", errOrExpiry(err))
	return newCA(commonName, certPath, keyPath)
}

func newCA(commonName, certPath, keyPath string) (*keyPair, error) {
	key, err := newKey(keyPath)
	if err != nil {
		return nil, err
	}
	serial, err := randSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing new CA: %w", err)
	}
	if err := writeAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key}, nil
}

// newKey generates an ECDSA P-256 key and persists it (SEC 1 "EC PRIVATE
// KEY" PEM, which both tls.LoadX509KeyPair and client-go's keyutil parse).
func newKey(path string) (*ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding key: %w", err)
	}
	if err := writeAtomic(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

func loadKeyPair(certPath, keyPath string) (*keyPair, error) {
	data, err := os.ReadFile(certPath)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no certificate PEM block", certPath)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certPath, err)
	}
	key, err := readKey(keyPath)
	if err != nil {
		return nil, err
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(key.Public()) {
		return nil, fmt.Errorf("%s does not match %s", keyPath, certPath)
	}
	return &keyPair{cert: cert, key: key}, nil
}

func readKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "EC PRIVATE KEY" {
		return nil, fmt.Errorf("%s: no EC PRIVATE KEY PEM block", path)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

func randSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generating serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// writeAtomic writes via a temp file and rename so a crash never leaves a
// truncated key or certificate that would block the next start.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("renaming into %s: %w", path, err)
	}
	return nil
}

func errOrExpiry(err error) string {
	if err != nil {
		return err.Error()
	}
	return "invalid or expiring"
}
