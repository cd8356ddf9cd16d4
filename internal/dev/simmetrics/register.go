package simmetrics

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"math/big"
	"net"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

const (
	// ServiceName is the kube-system Service the APIService points at: an
	// ExternalName Service for localhost, because the aggregator dials an
	// ExternalName Service's name directly, while a ClusterIP would need
	// a kube-proxy (or aggregator routing to endpoints) that simulated
	// members do not have.
	ServiceName = "shepherd-sim-metrics"
	// APIServiceName is the APIService of metrics.k8s.io/v1beta1.
	APIServiceName = "v1beta1.metrics.k8s.io"
	// CustomAPIServiceName is the APIService of
	// custom.metrics.k8s.io/v1beta2, served by the same server.
	CustomAPIServiceName = "v1beta2.custom.metrics.k8s.io"

	// authConfigMap is where the API server publishes how it proxies to
	// aggregated API servers (extension-apiserver-authentication).
	authConfigMap   = "extension-apiserver-authentication"
	authCAKey       = "requestheader-client-ca-file"
	authAllowedKey  = "requestheader-allowed-names"
	certValidity    = 10 * 365 * 24 * time.Hour
	availablePoll   = 50 * time.Millisecond
	servingHostname = ServiceName + "." + metav1.NamespaceSystem + ".svc"
)

// frontProxy is whom the server trusts: client certificates from the
// front-proxy CA, with one of the allowed names (any, if none are listed).
type frontProxy struct {
	pool    *x509.CertPool
	allowed []string
}

// readFrontProxy reads the front-proxy CA and allowed names the member's
// API server published. The API server writes them before it reports
// ready, so they are there when the member's control plane is.
func readFrontProxy(ctx context.Context, kube kubernetes.Interface) (frontProxy, error) {
	cm, err := kube.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, authConfigMap, metav1.GetOptions{})
	if err != nil {
		return frontProxy{}, fmt.Errorf("simmetrics: reading kube-system/%s: %w", authConfigMap, err)
	}
	ca := cm.Data[authCAKey]
	if ca == "" {
		return frontProxy{}, fmt.Errorf("simmetrics: kube-system/%s has no %s: the member's API server needs front-proxy (requestheader) authentication to proxy to aggregated APIs", authConfigMap, authCAKey)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ca)) {
		return frontProxy{}, fmt.Errorf("simmetrics: kube-system/%s: %s holds no PEM certificate", authConfigMap, authCAKey)
	}
	var allowed []string
	if raw := cm.Data[authAllowedKey]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &allowed); err != nil {
			return frontProxy{}, fmt.Errorf("simmetrics: kube-system/%s: %s is not a JSON list of names: %w", authConfigMap, authAllowedKey, err)
		}
	}
	return frontProxy{pool: pool, allowed: allowed}, nil
}

// servingCert makes a self-signed certificate for the name the aggregator
// verifies (SERVICE.NAMESPACE.svc) and for loopback; the PEM certificate
// is the APIService's CA bundle. It is made anew on every start (one
// ECDSA key, well under a millisecond) and registered with the APIService.
func servingCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("simmetrics: serving key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("simmetrics: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: servingHostname},
		DNSNames:              []string{servingHostname, "localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("simmetrics: self-signing the serving certificate: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}

// register points the member's API server at this server: the
// ExternalName Service, and the APIServices of metrics.k8s.io/v1beta1 and
// custom.metrics.k8s.io/v1beta2 with this start's port and CA bundle. All
// are created or updated, so a member started again on its data dir moves
// them to the new server.
func (s *Server) register(ctx context.Context) error {
	port := int32(s.addr.Port)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Namespace: metav1.NamespaceSystem},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports:        []corev1.ServicePort{{Name: "https", Port: port, TargetPort: intstr.FromInt32(port)}},
		},
	}
	services := s.kube.CoreV1().Services(metav1.NamespaceSystem)
	cur, err := services.Get(ctx, ServiceName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = services.Create(ctx, svc, metav1.CreateOptions{})
	case err == nil:
		cur.Spec = svc.Spec
		_, err = services.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("simmetrics: registering Service kube-system/%s: %w", ServiceName, err)
	}

	for _, gv := range []schema.GroupVersion{metricsv1beta1.SchemeGroupVersion, custommetricsv1beta2.SchemeGroupVersion} {
		if err := s.registerAPIService(ctx, gv, port); err != nil {
			return err
		}
	}
	s.registered = time.Now()
	return nil
}

// registerAPIService creates or updates the APIService of gv, pointing at
// the Service on port with this start's CA bundle.
func (s *Server) registerAPIService(ctx context.Context, gv schema.GroupVersion, port int32) error {
	name := gv.Version + "." + gv.Group
	api := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: metav1.NamespaceSystem, Name: ServiceName, Port: &port},
			Group:                gv.Group,
			Version:              gv.Version,
			CABundle:             s.caBundle,
			GroupPriorityMinimum: 100,
			VersionPriority:      100,
		},
	}
	apis := s.agg.ApiregistrationV1().APIServices()
	cur, err := apis.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = apis.Create(ctx, api, metav1.CreateOptions{})
	case err == nil:
		cur.Spec = api.Spec
		_, err = apis.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("simmetrics: registering APIService %s: %w", name, err)
	}
	return nil
}

// WaitAvailable waits until the member's API server routes metrics
// requests here: its discovery of metrics.k8s.io/v1beta1 and of
// custom.metrics.k8s.io/v1beta2, proxied by the aggregator, succeeds,
// and the aggregated discovery document marks neither stale.
// (The APIServices' Available conditions alone could be the stale ones of
// a previous start, stored in etcd.)
func (s *Server) WaitAvailable(ctx context.Context) error {
	var last string
	begin := time.Now()
	err := wait.PollUntilContextCancel(ctx, availablePoll, true, func(ctx context.Context) (bool, error) {
		list, err := s.kube.Discovery().ServerResourcesForGroupVersion(gv.String())
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == "PodMetrics" }) {
			last = fmt.Sprintf("discovery without PodMetrics: %v", list.APIResources)
			return false, nil
		}
		if _, err := s.kube.Discovery().ServerResourcesForGroupVersion(customGV.String()); err != nil {
			last = fmt.Sprintf("%s: %v", customGV, err)
			return false, nil
		}
		if stale := staleInDiscovery(s.kube.Discovery()); stale != "" {
			last = stale
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("simmetrics: the member's API server does not route to the metrics APIs (APIServices %s, %s): %s: %w", APIServiceName, CustomAPIServiceName, last, err)
	}
	s.log.V(1).Info("metrics API available", "sinceRegistered", time.Since(s.registered).Round(time.Millisecond),
		"waited", time.Since(begin).Round(time.Millisecond))
	return nil
}

// staleInDiscovery says which of the metrics group versions the API
// server's aggregated discovery (what every discovery client reads for
// all groups at once) still marks failed or stale, or "" when none is.
// The aggregator refreshes that document apart from proxying, so a
// member restarted on its data dir can route to the server while the
// document still holds the previous start's stale entries; a controller
// that discovers then (the namespace controller does at construction)
// logs an error.
func staleInDiscovery(d discovery.DiscoveryInterface) string {
	_, _, err := d.ServerGroupsAndResources()
	if err == nil {
		return ""
	}
	var failed *discovery.ErrGroupDiscoveryFailed
	if !errors.As(err, &failed) {
		return fmt.Sprintf("aggregated discovery: %v", err)
	}
	for _, want := range []schema.GroupVersion{gv, customGV} {
		if cause, found := failed.Groups[want]; found {
			return fmt.Sprintf("aggregated discovery of %s: %v", want, cause)
		}
	}
	return ""
}

// newServerErrorLog sends net/http's own messages (TLS handshakes that a
// client broke off, mostly) to the logger at V(2).
func newServerErrorLog(l logr.Logger) *log.Logger {
	return log.New(logWriter{l.V(2)}, "", 0)
}

type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
