// Package membership joins member clusters to the hub and removes them:
// it checks that the member answers with the given credentials, stores
// those credentials in a Secret and writes the Cluster object the
// controllers work from. Messages name the `shepherd join` flags because
// the CLI is its main caller.
package membership

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// Defaults of JoinOptions and UnjoinOptions.
const (
	DefaultNamespace    = "shepherd-system"
	DefaultProbeTimeout = 5 * time.Second
	// MaxNameLength is the Cluster name limit the API enforces: the name
	// prefixes the cluster's execution namespace (shepherd-es-<name>).
	MaxNameLength  = 48
	maxFieldLength = 63
)

// JoinOptions describe the member to join.
type JoinOptions struct {
	// Name of the Cluster: a DNS-1123 label of at most 48 characters.
	Name string
	// Kubeconfig of the member; KubeconfigPath is read when it is empty.
	Kubeconfig     []byte
	KubeconfigPath string
	// Context of the kubeconfig to use; empty means its current context.
	Context string
	// Provider, Region and Zone are copied into the Cluster's spec.
	Provider, Region, Zone string
	// Labels are set on the Cluster (placement selects clusters by label).
	Labels map[string]string
	// Namespace of the credentials Secret (default shepherd-system).
	Namespace string
	// ProbeTimeout bounds the reachability check (default 5 s).
	ProbeTimeout time.Duration
	// Credentials: CredentialsServiceAccount (default) or
	// CredentialsKubeconfig.
	Credentials string
	// Force re-points an existing Cluster at a member with another
	// identity. Without it Join refuses: the Works of the Cluster would
	// then be applied to a different cluster.
	Force bool
	// AllowRBACPropagation lets the hub's ServiceAccount escalate and bind
	// roles and cluster roles in the member, so that propagated RBAC
	// objects granting rights it lacks (an operator's ClusterRole) can be
	// applied. It makes the hub's identity as powerful as the member's
	// administrator (see docs/fleet-integrity.md). Off: a re-join removes
	// the grant. Only with CredentialsServiceAccount.
	AllowRBACPropagation bool
}

// JoinResult says what Join found and wrote.
type JoinResult struct {
	Cluster *clusterv1alpha1.Cluster
	// Secret holds the credentials: Namespace/Name.
	Secret clusterv1alpha1.LocalSecretReference
	// Endpoint is the member's API server URL, Version its Kubernetes version.
	Endpoint, Version string
	// Identity is the member's identity (its kube-system namespace UID).
	Identity string
	// RepointedFrom is the identity the Cluster had before a forced
	// re-point; empty otherwise.
	RepointedFrom string
}

// ValidateName checks a Cluster name the way the API will, with a message
// naming the NAME argument.
func ValidateName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("invalid cluster NAME %q: %s (e.g. \"eu-west-1\")", name, strings.Join(errs, "; "))
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("invalid cluster NAME %q: must be at most %d characters (it prefixes the execution namespace shepherd-es-NAME)", name, MaxNameLength)
	}
	return nil
}

func (o *JoinOptions) validate() error {
	if err := ValidateName(o.Name); err != nil {
		return err
	}
	for flag, v := range map[string]string{"--provider": o.Provider, "--region": o.Region, "--zone": o.Zone} {
		if len(v) > maxFieldLength {
			return fmt.Errorf("%s %q: must be at most %d characters", flag, v, maxFieldLength)
		}
	}
	for k, v := range o.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("--label %s=%s: invalid key: %s", k, v, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("--label %s=%s: invalid value: %s", k, v, strings.Join(errs, "; "))
		}
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	switch o.Credentials {
	case "":
		o.Credentials = CredentialsServiceAccount
	case CredentialsServiceAccount, CredentialsKubeconfig:
	default:
		return fmt.Errorf("--credentials %q: use %s or %s", o.Credentials, CredentialsServiceAccount, CredentialsKubeconfig)
	}
	if o.AllowRBACPropagation && o.Credentials != CredentialsServiceAccount {
		return fmt.Errorf("--allow-rbac-propagation grants the hub's ServiceAccount in the member; with --credentials %s the stored identity's rights are the member administrator's to set: drop one of the two flags", o.Credentials)
	}
	return nil
}

// Join makes a member part of the fleet. It first checks that the member
// answers with the given credentials — nothing is written for a member the
// hub cannot reach — and that it is not joined already under another name
// nor replaces the member a joined name had (see checkIdentity); then stores a minimized kubeconfig (one context,
// certificates embedded) in the Secret <namespace>/<name> and creates or
// updates the Cluster. Running it again with the same options changes
// nothing; with new options it updates the Secret and the Cluster (taints
// and status, which the controllers own, are left alone).
func Join(ctx context.Context, hub client.Client, opts JoinOptions) (*JoinResult, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	kc, err := loadKubeconfig(opts.Kubeconfig, opts.KubeconfigPath, opts.Context)
	if err != nil {
		return nil, err
	}
	kcBytes, err := kc.bytes()
	if err != nil {
		return nil, fmt.Errorf("encoding the member kubeconfig: %w", err)
	}
	ref := clusterv1alpha1.LocalSecretReference{Namespace: opts.Namespace, Name: opts.Name}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Labels: opts.Labels},
		Spec: clusterv1alpha1.ClusterSpec{
			APIEndpoint: kc.server,
			SecretRef:   &ref,
			Provider:    opts.Provider,
			Region:      opts.Region,
			Zone:        opts.Zone,
		},
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name},
		Data:       map[string][]byte{clusterclient.SecretKeyKubeconfig: kcBytes},
	}
	version, id, err := probe(ctx, cluster, secret, kc.context, opts.ProbeTimeout)
	if err != nil {
		return nil, err
	}
	cluster.Spec.ID = id
	repointed, err := checkIdentity(ctx, hub, opts, kc.server, id)
	if err != nil {
		return nil, err
	}
	if opts.Credentials == CredentialsServiceAccount {
		admin, err := memberClient(cluster, secret, opts.ProbeTimeout)
		if err != nil {
			return nil, err
		}
		data, expiry, err := issueServiceAccountCredentials(ctx, admin, kc, opts.ProbeTimeout, opts.AllowRBACPropagation)
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", opts.Name, err)
		}
		secret.Data = map[string][]byte{clusterclient.SecretKeyKubeconfig: data}
		secret.Annotations = map[string]string{clusterv1alpha1.AnnotationTokenExpiry: expiry.UTC().Format(time.RFC3339)}
	}
	if err := ensureNamespace(ctx, hub, ref.Namespace); err != nil {
		return nil, err
	}
	if err := applySecret(ctx, hub, secret); err != nil {
		return nil, fmt.Errorf("storing the credentials in Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	applied, err := applyCluster(ctx, hub, cluster)
	if err != nil {
		return nil, fmt.Errorf("writing Cluster %q: %w", opts.Name, err)
	}
	return &JoinResult{Cluster: applied, Secret: ref, Endpoint: kc.server, Version: version, Identity: id, RepointedFrom: repointed}, nil
}

// checkIdentity refuses a second name for a member that is already joined
// (two Works would write one object) and, without Force, re-pointing a
// joined name at a member with another identity (the Cluster's Works would
// land in a different cluster). It returns the identity a forced re-point
// replaces.
func checkIdentity(ctx context.Context, hub client.Client, opts JoinOptions, server, id string) (string, error) {
	list := &clusterv1alpha1.ClusterList{}
	if err := hub.List(ctx, list); err != nil {
		return "", fmt.Errorf("listing Clusters: %w", err)
	}
	previous := ""
	for _, c := range list.Items {
		switch {
		case c.Name != opts.Name && c.Spec.ID == id:
			return "", fmt.Errorf("the member at %s is already joined as cluster %q (identity %s): one cluster under two names would have two Works write the same objects. "+
				"Use the name %q, or unjoin it first", server, c.Name, id, c.Name)
		case c.Name == opts.Name && c.Spec.ID != "" && c.Spec.ID != id:
			previous = c.Spec.ID
		}
	}
	if previous != "" && !opts.Force {
		return "", fmt.Errorf("cluster %q is joined to another cluster (identity %s); --kubeconfig reaches identity %s at %s. "+
			"Re-pointing would move every workload placed on %q to that cluster: pass --force if that is intended, or join it under a new name",
			opts.Name, previous, id, server, opts.Name)
	}
	return previous, nil
}

// memberClient is a client of the member with the credentials of secret,
// built as the hub builds its own.
func memberClient(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret, timeout time.Duration) (kubernetes.Interface, error) {
	cfg, err := clusterclient.RestConfig(cluster, secret)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	return kubernetes.NewForConfig(cfg)
}

// probe checks that the member answers (server version) and accepts the
// credentials (listing namespaces, which the hub needs anyway), using the
// config the hub itself will build from the Secret. /version alone is not
// enough: it is open to anonymous users.
func probe(ctx context.Context, cluster *clusterv1alpha1.Cluster, secret *corev1.Secret, kubeContext string, timeout time.Duration) (string, string, error) {
	cfg, err := clusterclient.RestConfig(cluster, secret)
	if err != nil {
		return "", "", fmt.Errorf("--kubeconfig context %q: %w", kubeContext, err)
	}
	cfg.Timeout = timeout
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", "", fmt.Errorf("--kubeconfig context %q: %w", kubeContext, err)
	}
	refused := func(err error) error {
		return fmt.Errorf("member %q at %s refused the credentials of --kubeconfig context %q: %v", cluster.Name, cluster.Spec.APIEndpoint, kubeContext, err)
	}
	v, err := kc.Discovery().ServerVersion()
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return "", "", refused(err)
	}
	if err != nil {
		return "", "", fmt.Errorf("cannot reach member %q at %s: %v; check --kubeconfig/--context", cluster.Name, cluster.Spec.APIEndpoint, innermost(err))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := kc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return "", "", refused(innermost(err))
	}
	id, err := clusterclient.Identity(ctx, kc)
	if err != nil {
		return "", "", fmt.Errorf("reading the identity of member %q (the UID of its %s namespace): %v", cluster.Name, clusterclient.IdentityNamespace, innermost(err))
	}
	return v.GitVersion, id, nil
}

// innermost strips url.Error's `Get "https://.../version?timeout=5s":`
// prefix: the message already names the endpoint.
func innermost(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func ensureNamespace(ctx context.Context, hub client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on the hub: %w", name, err)
	}
	return nil
}

// applySecret server-side applies the credentials, labelled so that Unjoin
// knows it may delete them.
func applySecret(ctx context.Context, hub client.Client, s *corev1.Secret) error {
	ac := corev1ac.Secret(s.Name, s.Namespace).
		WithLabels(map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}).
		WithAnnotations(s.Annotations).
		WithType(corev1.SecretTypeOpaque).
		WithData(s.Data)
	return hub.Apply(ctx, ac, client.FieldOwner(workv1alpha1.FieldManager), client.ForceOwnership)
}

// applyCluster server-side applies the fields join owns. Taints are not
// among them, so the cluster status controller's taints and the user's
// survive a re-join; force takes over fields a user edited by hand, since
// join expresses the user's latest intent.
func applyCluster(ctx context.Context, hub client.Client, c *clusterv1alpha1.Cluster) (*clusterv1alpha1.Cluster, error) {
	c.SetGroupVersionKind(clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"))
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if err := hub.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(workv1alpha1.FieldManager), client.ForceOwnership); err != nil {
		return nil, err
	}
	out := &clusterv1alpha1.Cluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, err
	}
	return out, nil
}
