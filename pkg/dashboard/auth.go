package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Cookies, each named per port (cookieName): browsers send a host's
// cookies to all its ports, and two dashboards on one machine (two fleets)
// must not see each other's token.
const (
	tokenCookie = "shepherd_token"
	csrfCookie  = "shepherd_csrf"
	flashCookie = "shepherd_flash"
	csrfField   = "csrf"
)

// cookieName is base with the port the request came to.
func cookieName(base string, r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return base + "_" + port
	}
	return base
}

// setCookie sets an HttpOnly, same-site cookie for the whole dashboard;
// maxAge < 0 deletes it.
func setCookie(w http.ResponseWriter, r *http.Request, base, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(base, r), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// cookie reads a cookie set by setCookie.
func cookie(r *http.Request, base string) string {
	if c, err := r.Cookie(cookieName(base, r)); err == nil {
		return c.Value
	}
	return ""
}

// loopbackHost reports whether a host (with or without a port) names this
// machine: localhost or a loopback address. For a request's Host: on
// loopback, where no token is asked for, any other name is a page of
// another site whose name was pointed at 127.0.0.1 (DNS rebinding): it
// must not read the fleet nor act as the kubeconfig's user.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// accessTTL is how long a token's access check is trusted.
const accessTTL = time.Minute

// errNoToken is returned for a request without a token where one is needed.
var errNoToken = errors.New("a bearer token is needed: sign in with a token the hub accepts")

// IsLoopback reports whether a listen address (host:port) accepts
// connections from this machine only.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	return err == nil && loopbackHost(host)
}

// identity is who a request acts as.
type identity struct {
	// token is the user's bearer token; empty means the dashboard's
	// kubeconfig (allowed only when tokens are not required).
	token string
}

// tokenOf reads the user's token from the Authorization header or the
// sign-in cookie.
func tokenOf(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	return cookie(r, tokenCookie)
}

// users builds clients acting as the user, and checks tokens against the
// hub.
type users struct {
	hub          *rest.Config
	requireToken bool
	// mapper maps kinds to resources for every user's client: discovery is
	// the same for all, and asking it once per request would double the
	// requests.
	mapper meta.RESTMapper

	mu      sync.Mutex
	checked map[[32]byte]time.Time
}

func newUsers(hub *rest.Config, requireToken bool) (*users, error) {
	httpClient, err := rest.HTTPClientFor(hub)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(hub, httpClient)
	if err != nil {
		return nil, err
	}
	return &users{hub: hub, requireToken: requireToken, mapper: mapper, checked: map[[32]byte]time.Time{}}, nil
}

// config is the hub configuration acting as id: the user's token with the
// hub's address and CA and none of the dashboard's own credentials, or the
// dashboard's kubeconfig when no token was given and none is required.
func (u *users) config(id identity) (*rest.Config, error) {
	if id.token == "" {
		if u.requireToken {
			return nil, errNoToken
		}
		return rest.CopyConfig(u.hub), nil
	}
	cfg := rest.AnonymousClientConfig(u.hub)
	cfg.BearerToken = id.token
	return cfg, nil
}

func (u *users) client(id identity) (client.Client, error) {
	cfg, err := u.config(id)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme, Mapper: u.mapper})
}

// check makes sure, where tokens are required, that the request's token is
// accepted by the hub and may list bindings in every namespace: the pages
// show the whole fleet, so that is what reading them takes. A positive
// answer is trusted for accessTTL.
func (u *users) check(ctx context.Context, id identity) error {
	if !u.requireToken {
		return nil
	}
	if id.token == "" {
		return errNoToken
	}
	sum := sha256.Sum256([]byte(id.token))
	u.mu.Lock()
	ok := time.Now().Before(u.checked[sum])
	u.mu.Unlock()
	if ok {
		return nil
	}
	if err := u.verify(ctx, id); err != nil {
		return err
	}
	u.mu.Lock()
	now := time.Now()
	for k, until := range u.checked {
		if now.After(until) {
			delete(u.checked, k)
		}
	}
	u.checked[sum] = now.Add(accessTTL)
	u.mu.Unlock()
	return nil
}

// verify asks the hub whether it accepts the token and, where tokens are
// required, whether its identity may list bindings everywhere.
func (u *users) verify(ctx context.Context, id identity) error {
	c, err := u.client(id)
	if err != nil {
		return err
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "work.shepherd.io", Resource: "resourcebindings", Verb: "list"},
	}}
	if err := c.Create(ctx, review); err != nil {
		return fmt.Errorf("the hub did not accept the token: %w", err)
	}
	if u.requireToken && !review.Status.Allowed {
		return fmt.Errorf("the token's identity may not list resourcebindings in all namespaces, which the dashboard's pages show; ask for read access to Shepherd's objects")
	}
	return nil
}

// csrfToken returns the browser's CSRF token, setting a new one in a
// cookie when it has none.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if v := cookie(r, csrfCookie); len(v) == 64 {
		return v
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := hex.EncodeToString(b)
	setCookie(w, r, csrfCookie, v, 0)
	return v
}

// checkCSRF refuses a POST whose form token does not match the browser's
// cookie, or that comes from another origin.
func checkCSRF(r *http.Request) error {
	if origin := r.Header.Get("Origin"); origin != "" && origin != "null" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return fmt.Errorf("cross-origin request from %q refused", origin)
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return fmt.Errorf("cross-site request (%s) refused", site)
	}
	v := cookie(r, csrfCookie)
	if v == "" {
		return errors.New("the CSRF cookie is missing: reload the page and try again")
	}
	if subtle.ConstantTimeCompare([]byte(v), []byte(r.PostFormValue(csrfField))) != 1 {
		return errors.New("the form's CSRF token does not match: reload the page and try again")
	}
	return nil
}
