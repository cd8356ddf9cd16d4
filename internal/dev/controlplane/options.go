package controlplane

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Names used for the kubeconfig cluster, user and context entries. A single
// well-known name lets users `kubectl --context shepherd-hub` without having
// to look anything up.
const (
	KubeconfigName = "shepherd-hub"

	defaultBindAddress  = "127.0.0.1"
	defaultStartTimeout = 2 * time.Minute
	// defaultShutdownTimeout bounds how long Stop waits for the apiserver to
	// drain before etcd is closed underneath it. `shepherd up` must exit
	// within 5s of SIGTERM, so this stays well below that.
	defaultShutdownTimeout = 3 * time.Second
)

// Options configures an embedded control plane. Only DataDir is required.
type Options struct {
	// DataDir holds all persistent state: etcd data in DataDir/etcd,
	// certificates in DataDir/pki and the admin kubeconfig in
	// DataDir/kubeconfig. Reusing a DataDir restarts the same "cluster".
	DataDir string

	// CRDs are created or updated once the apiserver is ready; Start returns
	// only after every CRD reports Established=True.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// Logger receives our own structured logs and etcd's warnings/errors.
	// kube-apiserver logs through klog, which is process-global and left to
	// the caller (see RedirectKlog). Defaults to logr.Discard().
	Logger logr.Logger

	// BindAddress is the IP the apiserver listens on (default 127.0.0.1).
	// etcd always listens on loopback regardless of this setting.
	BindAddress string

	// ExtraSANs are additional DNS names or IPs for the apiserver serving
	// certificate, e.g. a host IP that member clusters use to reach the hub.
	ExtraSANs []string

	// APIServerPort, EtcdClientPort and EtcdPeerPort fix the listening
	// ports; 0 picks a free loopback port on every start.
	APIServerPort  int
	EtcdClientPort int
	EtcdPeerPort   int

	// EtcdVia, when set, is given etcd's client address (host:port) on
	// every start and returns the address the API server dials instead: a
	// test puts a proxy in between to slow etcd down or cut it off.
	EtcdVia func(etcdAddr string) (string, error)

	// StartTimeout bounds the whole of Start (default 2m, which is generous
	// for slow CI machines; a warm start takes a few seconds).
	StartTimeout time.Duration

	// ShutdownTimeout bounds how long shutdown waits for the apiserver to
	// return before closing etcd anyway (default 3s).
	ShutdownTimeout time.Duration

	// PriorityAndFairness turns on API Priority and Fairness, as on a real
	// cluster: requests are classified by FlowSchemas into priority levels
	// (the built-in ones, and any applied) and queue there, instead of
	// sharing max-in-flight alone. A hub under load from many clients
	// needs it; members and test hubs start faster without it.
	PriorityAndFairness bool

	// MaxRequestsInFlight is the API server's limit of requests served at
	// once (read-only and mutating together, a third of it mutating; with
	// PriorityAndFairness the seats its priority levels divide). 0 keeps
	// kube-apiserver's default, 600.
	MaxRequestsInFlight int
}

// complete validates o and returns a copy with defaults applied.
func (o Options) complete() (Options, error) {
	if o.DataDir == "" {
		return o, errors.New("controlplane: Options.DataDir is required")
	}
	abs, err := filepath.Abs(o.DataDir)
	if err != nil {
		return o, fmt.Errorf("controlplane: resolving data dir %q: %w", o.DataDir, err)
	}
	o.DataDir = abs
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.BindAddress == "" {
		o.BindAddress = defaultBindAddress
	}
	if net.ParseIP(o.BindAddress) == nil {
		return o, fmt.Errorf("controlplane: BindAddress %q is not an IP address", o.BindAddress)
	}
	if o.MaxRequestsInFlight != 0 && o.MaxRequestsInFlight < 3 {
		return o, fmt.Errorf("controlplane: MaxRequestsInFlight %d: at least 3 (a third of it for mutating requests), or 0 for the default", o.MaxRequestsInFlight)
	}
	for _, p := range []int{o.APIServerPort, o.EtcdClientPort, o.EtcdPeerPort} {
		if p < 0 || p > 65535 {
			return o, fmt.Errorf("controlplane: port %d out of range", p)
		}
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTimeout
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = defaultShutdownTimeout
	}
	return o, nil
}

func (o Options) etcdDir() string        { return filepath.Join(o.DataDir, "etcd") }
func (o Options) pkiDir() string         { return filepath.Join(o.DataDir, "pki") }
func (o Options) kubeconfigPath() string { return filepath.Join(o.DataDir, "kubeconfig") }
func (o Options) lockPath() string       { return filepath.Join(o.DataDir, "lock") }

// bindIP is the parsed BindAddress; complete() guarantees it parses.
func (o Options) bindIP() net.IP { return net.ParseIP(o.BindAddress) }

// clientHost is the address clients should dial: the bind address, or
// loopback when binding to all interfaces.
func (o Options) clientHost() string {
	ip := o.bindIP()
	if ip.IsUnspecified() {
		if ip.To4() == nil {
			return "::1"
		}
		return "127.0.0.1"
	}
	return ip.String()
}
