package clusterclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The hub's identity in a member: a ServiceAccount that `shepherd join`
// creates, bound to a ClusterRole, whose short-lived tokens the hub
// stores and rotates (see the membership package and the cluster status
// controller).
const (
	// MemberNamespace holds the hub's ServiceAccount in each member.
	MemberNamespace = "shepherd-system"
	// MemberServiceAccount is the hub's ServiceAccount in each member.
	MemberServiceAccount = "shepherd-hub"
	// MemberClusterRole is what the hub may do in a member.
	MemberClusterRole = "shepherd:hub"
	// MemberRBACPropagationRole is the ClusterRole (and its binding) that
	// lets the hub's identity grant RBAC rights it does not hold itself:
	// created only by `shepherd join --allow-rbac-propagation`.
	MemberRBACPropagationRole = "shepherd:hub:rbac-propagation"
	// DefaultTokenLifetime is the lifetime asked for each token; a member
	// may grant less.
	DefaultTokenLifetime = 24 * time.Hour
)

// RequestToken asks the member for a token of the hub's ServiceAccount,
// through kc (the joining user's credentials, or the current token: the
// ServiceAccount may create its own tokens). It returns the token and its
// expiry.
func RequestToken(ctx context.Context, kc kubernetes.Interface, lifetime time.Duration) (string, time.Time, error) {
	seconds := int64(lifetime / time.Second)
	tr, err := kc.CoreV1().ServiceAccounts(MemberNamespace).CreateToken(ctx, MemberServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", MemberNamespace, MemberServiceAccount, err)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}

// TokenExpiry reads the expiry of a JWT without verifying it (the member
// verifies it; the hub only needs to know when to renew).
func TokenExpiry(token string) (time.Time, bool) {
	c, ok := tokenClaims(token)
	if !ok || c.Exp == 0 {
		return time.Time{}, false
	}
	return time.Unix(c.Exp, 0), true
}

// TokenTimes reads when a JWT was issued and when it expires, without
// verifying it: whoever renews a token needs only its lifetime. ok is
// false for a token that is not a JWT or lacks either claim.
func TokenTimes(token string) (issued, expires time.Time, ok bool) {
	c, ok := tokenClaims(token)
	if !ok || c.Iat == 0 || c.Exp <= c.Iat {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(c.Iat, 0), time.Unix(c.Exp, 0), true
}

type jwtTimes struct {
	Iat int64 `json:"iat"`
	Exp int64 `json:"exp"`
}

func tokenClaims(token string) (jwtTimes, bool) {
	var c jwtTimes
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, false
	}
	return c, json.Unmarshal(payload, &c) == nil
}

// RequiredRight is one thing the hub must be allowed to do in a member.
type RequiredRight struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
}

func (r RequiredRight) String() string {
	res := r.Resource
	if r.Group != "" {
		res += "." + r.Group
	}
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	if r.Name != "" {
		res += " " + r.Name
	}
	if r.Namespace != "" {
		res += " in " + r.Namespace
	}
	return r.Verb + " " + res
}

// RequiredRights are the rights every Work needs: writing and reading
// workloads and their configuration in any namespace, creating namespaces,
// reading the member's identity and nodes, and renewing its own token.
var RequiredRights = []RequiredRight{
	{Verb: "create", Group: "apps", Resource: "deployments"},
	{Verb: "patch", Group: "apps", Resource: "deployments"},
	{Verb: "delete", Group: "apps", Resource: "deployments"},
	{Verb: "watch", Group: "apps", Resource: "deployments"},
	{Verb: "create", Resource: "configmaps"},
	{Verb: "delete", Resource: "secrets"},
	{Verb: "create", Resource: "namespaces"},
	{Verb: "patch", Resource: "namespaces"},
	{Verb: "get", Resource: "namespaces", Name: IdentityNamespace},
	{Verb: "list", Resource: "nodes"},
	{Verb: "list", Resource: "pods"},
	{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: MemberNamespace, Name: MemberServiceAccount},
}

// RBACPropagationRights are the rights a propagated Role, ClusterRole or
// binding needs beyond RequiredRights: the API server refuses to store a
// role holding, or a binding granting, rights its writer lacks, unless the
// writer may escalate roles and bind them.
var RBACPropagationRights = []RequiredRight{
	{Verb: "escalate", Group: rbacGroup, Resource: "roles"},
	{Verb: "escalate", Group: rbacGroup, Resource: "clusterroles"},
	{Verb: "bind", Group: rbacGroup, Resource: "roles"},
	{Verb: "bind", Group: rbacGroup, Resource: "clusterroles"},
}

const rbacGroup = "rbac.authorization.k8s.io"

// RBACPropagationRules grant RBACPropagationRights: what an identity that
// applies propagated RBAC objects is given on an explicit opt-in (`shepherd
// join` and `shepherd register --deploy` with --allow-rbac-propagation).
func RBACPropagationRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{rbacGroup}, Resources: []string{"roles", "clusterroles"}, Verbs: []string{"escalate", "bind"}}}
}

// MissingRights asks the member, through the hub's own credentials in kc,
// which of rights it lacks (SelfSubjectAccessReviews).
func MissingRights(ctx context.Context, kc kubernetes.Interface, rights []RequiredRight) ([]RequiredRight, error) {
	var missing []RequiredRight
	var errs []error
	for _, r := range rights {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: r.Verb, Group: r.Group, Resource: r.Resource, Subresource: r.Subresource, Namespace: r.Namespace, Name: r.Name,
			},
		}}
		got, err := kc.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !got.Status.Allowed {
			missing = append(missing, r)
		}
	}
	return missing, errors.Join(errs...)
}
