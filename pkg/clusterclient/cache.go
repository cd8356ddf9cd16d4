package clusterclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// Options tunes the member clients a Cache builds.
type Options struct {
	// RequestTimeout bounds every request/response call to a member
	// (default DefaultRequestTimeout). Watches are not bounded by it.
	RequestTimeout time.Duration
	// QPS and Burst rate-limit each member's clients (defaults DefaultQPS
	// and DefaultBurst). Limits are per member, so a busy member cannot
	// starve another.
	QPS   float32
	Burst int
	// SecretsNamespace is the only hub namespace a Cluster's secretRef may
	// name (default DefaultSecretsNamespace): a Cluster must not make the
	// controllers read, and send to a member, a Secret of any namespace.
	SecretsNamespace string
}

// DefaultSecretsNamespace holds the members' credentials Secrets.
const DefaultSecretsNamespace = "shepherd-system"

func (o Options) withDefaults() Options {
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.QPS <= 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.SecretsNamespace == "" {
		o.SecretsNamespace = DefaultSecretsNamespace
	}
	return o
}

// Cache holds one set of Clients per member cluster, rebuilt when what they
// were built from changes: the Cluster's endpoint, secretRef or TLS setting,
// or the Secret's resourceVersion. Reads go through the given hub reader
// (normally the manager's cached client), so a cache hit costs no request.
type Cache struct {
	hub  client.Reader
	opts Options

	mu      sync.Mutex
	clients map[string]*Clients
	// local, when set, is the one member a NewLocal cache serves.
	local string
}

// NewCache returns an empty cache reading Clusters' Secrets through hub.
func NewCache(hub client.Reader, opts Options) *Cache {
	return &Cache{hub: hub, opts: opts.withDefaults(), clients: map[string]*Clients{}}
}

// source is what a member's Clients were built from; any change rebuilds them.
type source struct {
	endpoint        string
	secret          types.NamespacedName
	insecure        bool
	secretUID       types.UID
	secretRevision  string
	secretSpecified bool
}

func sourceOf(c *clusterv1alpha1.Cluster, s *corev1.Secret) source {
	src := source{endpoint: c.Spec.APIEndpoint, insecure: c.Spec.InsecureSkipTLSVerification}
	if ref := c.Spec.SecretRef; ref != nil {
		src.secret = types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
		src.secretSpecified = true
	}
	if s != nil {
		src.secretUID, src.secretRevision = s.UID, s.ResourceVersion
	}
	return src
}

// ErrNoCredentials is wrapped by errors about a missing or unusable
// credentials Secret, so callers can tell them from network failures.
var ErrNoCredentials = errors.New("no usable credentials")

// ForCluster returns the clients of cluster, building them when first asked
// for or when their source changed. Clients are safe for concurrent use; a
// caller may keep the pointer and compare it with a later ForCluster result
// to learn that the credentials changed (e.g. to restart informers).
func (c *Cache) ForCluster(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*Clients, error) {
	if c.local != "" {
		if cluster.Name != c.local {
			return nil, fmt.Errorf("cluster %q: this agent serves cluster %q only: %w", cluster.Name, c.local, ErrNoCredentials)
		}
		return c.clients[c.local], nil
	}
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, fmt.Errorf("cluster %q: spec.secretRef is not set: %w", cluster.Name, ErrNoCredentials)
	}
	if ref.Namespace != c.opts.SecretsNamespace {
		return nil, fmt.Errorf("cluster %q: spec.secretRef names namespace %q, but credentials are only read from %q: move the Secret there: %w",
			cluster.Name, ref.Namespace, c.opts.SecretsNamespace, ErrNoCredentials)
	}
	secret := &corev1.Secret{}
	if err := c.hub.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("cluster %q: credentials Secret %s/%s not found: %w", cluster.Name, ref.Namespace, ref.Name, ErrNoCredentials)
		}
		return nil, fmt.Errorf("cluster %q: reading credentials Secret %s/%s: %w", cluster.Name, ref.Namespace, ref.Name, err)
	}
	src := sourceOf(cluster, secret)

	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.clients[cluster.Name]; ok && cur.src == src {
		return cur, nil
	}
	cfg, err := RestConfig(cluster, secret)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w: %w", cluster.Name, ErrNoCredentials, err)
	}
	built, err := newClients(cluster.Name, cfg, c.opts)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cluster.Name, err)
	}
	built.src = src
	c.clients[cluster.Name] = built
	return built, nil
}

// Forget drops the clients of a cluster, e.g. when the Cluster was deleted.
func (c *Cache) Forget(name string) {
	if c.local != "" {
		return // the one member's clients come from the agent's own configuration
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.clients, name)
}

// Clients are the clients of one member. Config and the clients built from
// it carry the request timeout; use WatchConfig for informers.
type Clients struct {
	// Cluster is the member's name.
	Cluster string
	// Config has the request timeout, QPS and user agent applied.
	Config     *rest.Config
	Dynamic    dynamic.Interface
	Kubernetes kubernetes.Interface
	// Mapper maps kinds to resources through the member's discovery,
	// cached; use RESTMapping to refresh on unknown kinds.
	Mapper *restmapper.DeferredDiscoveryRESTMapper

	src source
}

func newClients(name string, cfg *rest.Config, o Options) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = o.RequestTimeout
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = userAgent
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building HTTP client: %w", err)
	}
	kc, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &Clients{
		Cluster:    name,
		Config:     cfg,
		Dynamic:    dc,
		Kubernetes: kc,
		Mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kc.Discovery())),
	}, nil
}

// WatchConfig returns a copy of Config without the request timeout: an
// http.Client timeout would cut every watch after RequestTimeout and make
// informers relist constantly. Informers bound their own requests.
func (c *Clients) WatchConfig() *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.Timeout = 0
	return cfg
}

// NewLocal returns a cache that always hands out the clients of one
// member, built from cfg: the agent of a Pull cluster runs inside (or
// beside) its member and reaches it with its own credentials, never with a
// Secret from the hub. Asking for any other cluster is an error.
func NewLocal(cluster string, cfg *rest.Config, opts Options) (*Cache, error) {
	built, err := newClients(cluster, cfg, opts.withDefaults())
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cluster, err)
	}
	return &Cache{opts: opts.withDefaults(), clients: map[string]*Clients{cluster: built}, local: cluster}, nil
}
