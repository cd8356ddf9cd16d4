package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
)

// fieldOwner is the field manager of the dashboard's writes.
const fieldOwner = "shepherd-dashboard"

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, view{page: "login", title: "Sign in"})
}

// signIn keeps a token in an HttpOnly, same-site cookie after the hub
// accepted it.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if status, err := readForm(w, r, formBody); err != nil {
		s.refuse(w, r, status, err)
		return
	}
	if err := checkCSRF(r); err != nil {
		s.refuse(w, r, http.StatusForbidden, err)
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		s.render(w, r, view{page: "login", title: "Sign in", status: http.StatusBadRequest, err: "token: paste a bearer token"})
		return
	}
	if err := s.users.verify(r.Context(), identity{token: token}); err != nil {
		s.render(w, r, view{page: "login", title: "Sign in", status: http.StatusUnauthorized, err: err.Error()})
		return
	}
	setCookie(w, r, tokenCookie, token, 0)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if status, err := readForm(w, r, formBody); err != nil {
		s.refuse(w, r, status, err)
		return
	}
	if err := checkCSRF(r); err != nil {
		s.refuse(w, r, http.StatusForbidden, err)
		return
	}
	setCookie(w, r, tokenCookie, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// action wraps a change: refused in read-only mode and without a matching
// CSRF token; run with a client acting as the user. Success goes back to
// the page the form was on with a message; a refusal (the hub's RBAC, a
// bad form) is shown with the hub's status code.
func (s *Server) action(fn func(ctx context.Context, c client.Client, r *http.Request, snap *Snapshot) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, snap, ok := s.admit(w, r, gate{post: true, action: true})
		if !ok {
			return
		}
		c, err := s.users.client(id)
		if err != nil {
			s.denied(w, r, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		msg, err := fn(ctx, c, r, snap)
		if err != nil {
			s.render(w, r, view{page: "error", title: "The action failed", status: hubStatus(err), err: err.Error()})
			return
		}
		// The message rides in a short-lived cookie, not the URL: a link
		// cannot put words in the dashboard's mouth.
		setCookie(w, r, flashCookie, url.QueryEscape(msg), 60)
		http.Redirect(w, r, back(r), http.StatusSeeOther)
	}
}

// back is the page the form was posted from, its query included (the
// Referer, when it is this server's), else the fleet.
func back(r *http.Request) string {
	u, err := url.Parse(r.Referer())
	if err != nil || u.Host != r.Host || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || strings.HasPrefix(u.Path, "/\\") {
		return "/"
	}
	if u.RawQuery != "" {
		return u.EscapedPath() + "?" + u.RawQuery
	}
	return u.EscapedPath()
}

// confirm lets the old copy of an evicted workload go.
func (s *Server) confirm(ctx context.Context, c client.Client, r *http.Request, _ *Snapshot) (string, error) {
	ref, err := ParseRefPath(r.PostFormValue("binding"))
	if err != nil {
		return "", err
	}
	cluster := r.PostFormValue("cluster")
	if cluster == "" {
		return "", badRequest("cluster: name the cluster the workload was evicted from")
	}
	key := actions.BindingKey{Cluster: ref.Cluster, Namespace: ref.Namespace, Name: ref.Name}
	if err := actions.ConfirmEviction(ctx, c, key, cluster, fieldOwner); err != nil {
		return "", err
	}
	return fmt.Sprintf("Confirmed: the copy of %s on %s is removed.", ref, cluster), nil
}

// reschedule creates a RescheduleTask for a workload (form field binding)
// or a policy (form field policy: namespace/name, or a
// ClusterPropagationPolicy's name).
func (s *Server) reschedule(ctx context.Context, c client.Client, r *http.Request, snap *Snapshot) (string, error) {
	var spec taskv1alpha1.RescheduleTaskSpec
	switch {
	case r.PostFormValue("binding") != "":
		ref, err := ParseRefPath(r.PostFormValue("binding"))
		if err != nil {
			return "", err
		}
		b, ok := snap.Find(ref)
		if !ok {
			return "", badRequest(fmt.Sprintf("binding: %s %s does not exist", ref.Kind(), ref))
		}
		res := b.Obj.GetBindingSpec().Resource
		spec.TargetRefResource = []taskv1alpha1.ResourceSelector{{APIVersion: res.APIVersion, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name}}
	case r.PostFormValue("policy") != "":
		p := r.PostFormValue("policy")
		ns, name, ok := strings.Cut(p, "/")
		if !ok {
			ns, name = "", p
		}
		if name == "" || strings.Contains(name, "/") {
			return "", badRequest(fmt.Sprintf("policy %q: give NAMESPACE/NAME, or the name of a ClusterPropagationPolicy", p))
		}
		spec.TargetRefPolicy = []taskv1alpha1.PolicySelector{{Namespace: ns, Name: name}}
	default:
		return "", badRequest("nothing to reschedule: the form names no workload (binding) and no policy")
	}
	task, err := actions.Reschedule(ctx, c, spec, fieldOwner)
	if err != nil {
		return "", err
	}
	return "RescheduleTask " + task.Name + " created: follow it on the failover page.", nil
}

// ParseRefPath reads a workload page path back into a binding reference.
func ParseRefPath(p string) (Ref, error) {
	parts := strings.Split(strings.TrimPrefix(p, "/workloads/"), "/")
	switch {
	case strings.HasPrefix(p, "/workloads/ns/") && len(parts) == 3 && parts[1] != "" && parts[2] != "":
		return Ref{Namespace: parts[1], Name: parts[2]}, nil
	case strings.HasPrefix(p, "/workloads/cluster/") && len(parts) == 2 && parts[1] != "":
		return Ref{Cluster: true, Name: parts[1]}, nil
	}
	return Ref{}, badRequest(fmt.Sprintf("binding %q: want /workloads/ns/NAMESPACE/NAME or /workloads/cluster/NAME", p))
}

// formError is a bad form: answered with 400.
type formError string

func (e formError) Error() string { return string(e) }

func badRequest(msg string) error { return formError(msg) }
