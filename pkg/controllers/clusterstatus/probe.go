package clusterstatus

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// Reasons of the Ready condition.
const (
	ReasonReady = "Ready"
	// ReasonNotReady: the member answers but its readiness check fails.
	ReasonNotReady = "NotReady"
	// ReasonUnreachable: the member did not answer (network, TLS, timeout).
	ReasonUnreachable = "Unreachable"
	// ReasonUnauthorized: the member rejected the stored credentials.
	ReasonUnauthorized = "Unauthorized"
	// ReasonNoCredentials: the credentials Secret is missing or unusable.
	ReasonNoCredentials = "NoCredentials"
	// ReasonIdentityMismatch: the member answers with an identity other
	// than the Cluster's spec.id (see clusterv1alpha1.ReasonIdentityMismatch).
	ReasonIdentityMismatch = clusterv1alpha1.ReasonIdentityMismatch
	// ReasonIdentityUnverified: the member's identity cannot be read (e.g.
	// the hub lost the right to); treated as a mismatch.
	ReasonIdentityUnverified = clusterv1alpha1.ReasonIdentityUnverified
)

// checkIdentity compares the member's identity (its kube-system namespace
// UID) with the Cluster's spec.id. A member that cannot show its identity
// is treated as a mismatch: applying to an unknown cluster is the harm the
// check exists to prevent.
func checkIdentity(ctx context.Context, c *clusterclient.Clients, cluster *clusterv1alpha1.Cluster) (readiness, bool) {
	if cluster.Spec.ID == "" {
		return readiness{}, true
	}
	id, err := clusterclient.Identity(ctx, c.Kubernetes)
	if clusterclient.IsUnreachable(err) {
		return unreachable(ReasonUnreachable, err), false
	}
	var msg string
	switch {
	case err != nil:
		msg = fmt.Sprintf("cannot read the member's identity (the UID of its kube-system namespace): %v; nothing is applied to it until it can be verified", err)
		return readiness{status: metav1.ConditionFalse, reason: ReasonIdentityUnverified, message: truncate(msg)}, false
	case id != cluster.Spec.ID:
		msg = fmt.Sprintf("the member at %s answers with identity %s, but this Cluster was joined to %s: its endpoint or credentials now reach another cluster. "+
			"Nothing is applied to or deleted from it. If the move is intended, run `shepherd join %s --kubeconfig ... --force`", cluster.Spec.APIEndpoint, id, cluster.Spec.ID, cluster.Name)
	default:
		return readiness{}, true
	}
	return readiness{status: metav1.ConditionFalse, reason: ReasonIdentityMismatch, message: truncate(msg)}, false
}

// maxMessage caps condition messages (and so event notes, which the
// events API limits to 1024 characters).
const maxMessage = 900

// readiness is the outcome of the readiness probe.
type readiness struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func unreachable(reason string, err error) readiness {
	return readiness{status: metav1.ConditionUnknown, reason: reason, message: truncate(err.Error())}
}

// probeReady asks /readyz, falling back to /healthz for members that do not
// serve it or forbid it to the stored identity, and finally to /version:
// a member that answers with its version is at least serving requests.
func probeReady(ctx context.Context, c *clusterclient.Clients) readiness {
	for _, path := range []string{"/readyz", "/healthz"} {
		var code int
		body, err := c.Kubernetes.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).StatusCode(&code).Raw()
		switch {
		case err == nil:
			return readiness{status: metav1.ConditionTrue, reason: ReasonReady, message: "member API server is ready"}
		case clusterclient.IsUnreachable(err):
			return unreachable(ReasonUnreachable, err)
		case code == http.StatusUnauthorized:
			return unreachable(ReasonUnauthorized, err)
		case code == http.StatusNotFound || code == http.StatusForbidden:
			continue
		default:
			return readiness{status: metav1.ConditionFalse, reason: ReasonNotReady,
				message: truncate(fmt.Sprintf("%s returned %d: %s", path, code, failedChecks(body, err)))}
		}
	}
	if _, err := c.Kubernetes.Discovery().ServerVersion(); err != nil {
		return unreachable(ReasonUnreachable, err)
	}
	return readiness{status: metav1.ConditionTrue, reason: ReasonReady, message: "member API server answers (health endpoints unavailable)"}
}

// failedChecks condenses a verbose health response ("[+]ping ok\n[-]etcd
// failed: reason withheld\n...") to the checks that failed.
func failedChecks(body []byte, err error) string {
	var failed []string
	for _, line := range strings.Split(string(body), "\n") {
		if check, ok := strings.CutPrefix(line, "[-]"); ok {
			failed = append(failed, strings.TrimSuffix(check, ": reason withheld"))
		}
	}
	if len(failed) > 0 {
		return strings.Join(failed, ", ")
	}
	if msg := strings.TrimSpace(string(body)); msg != "" {
		return msg
	}
	return err.Error()
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage-3] + "..."
}

// apiEnablements lists the member's group/versions and their resources,
// sorted, without subresources. Discovery that fails for some groups (an
// aggregated API that is down) still yields the others; the error is
// returned alongside so the caller can log it.
func apiEnablements(d discovery.DiscoveryInterface) ([]clusterv1alpha1.APIEnablement, error) {
	_, lists, err := d.ServerGroupsAndResources()
	if len(lists) == 0 && err != nil {
		return nil, err
	}
	out := make([]clusterv1alpha1.APIEnablement, 0, len(lists))
	for _, l := range lists {
		e := clusterv1alpha1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
		}
		sort.Slice(e.Resources, func(i, j int) bool { return e.Resources[i].Name < e.Resources[j].Name })
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupVersion < out[j].GroupVersion })
	return out, err
}

// unstampedVersion prefixes the git version of a Kubernetes build made
// without version ldflags, such as the embedded API servers of `shepherd up`
// run with `go run`.
const unstampedVersion = "v0.0.0-master"

// displayVersion is the member's git version, or "v<major>.<minor>" from its
// binary version when the build was not stamped: the placeholder
// "v0.0.0-master+$Format:%H$" tells a user nothing.
func displayVersion(v *version.Info) string {
	if strings.HasPrefix(v.GitVersion, unstampedVersion) && v.Major != "" && v.Minor != "" {
		return fmt.Sprintf("v%s.%s", v.Major, v.Minor)
	}
	return v.GitVersion
}
