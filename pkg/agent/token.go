package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// The agent's hub token is renewed by the agent itself. `shepherd register`
// issues a token of the agent's ServiceAccount that lasts --token-ttl; once
// renewAfter of its lifetime has passed, the agent asks the hub for a new
// token of the same lifetime (its Role lets it request tokens of its own
// ServiceAccount and of no other), uses it for every request from then on,
// and stores it where the old one was read from, so a restart starts with
// it. An agent that keeps running therefore never reaches its token's
// expiry, and a stolen token is good for at most one lifetime.
const (
	// renewAfter is the part of a token's lifetime after which it is
	// renewed: the remaining fifth leaves room for retries while the hub
	// is unreachable.
	renewAfter = 0.8
	// renewRetryMin and renewRetryMax bound the wait between failed
	// renewals.
	renewRetryMin = 30 * time.Second
	renewRetryMax = 10 * time.Minute
)

// renewAt is when a token issued at issued and expiring at expires is due
// for renewal.
func renewAt(issued, expires time.Time) time.Time {
	return issued.Add(time.Duration(renewAfter * float64(expires.Sub(issued))))
}

// bearerToken is the token every hub request carries: a renewal swaps it
// without rebuilding clients.
type bearerToken struct {
	mu    sync.RWMutex
	token string
}

func (b *bearerToken) get() string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.token
}

func (b *bearerToken) set(token string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.token = token
}

// RoundTrip adds the current token to a request that carries no
// Authorization header of its own.
type bearerRoundTripper struct {
	token *bearerToken
	next  http.RoundTripper
}

func (rt bearerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return rt.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+rt.token.get())
	return rt.next.RoundTrip(req)
}

// withRenewableToken returns a copy of cfg whose requests carry the token
// held in the returned bearerToken, or cfg itself and nil when cfg does not
// authenticate with a renewable token (client certificates, or a token
// that is not a JWT with its issue and expiry times).
func withRenewableToken(cfg *rest.Config) (*rest.Config, *bearerToken) {
	if cfg.BearerToken == "" || cfg.BearerTokenFile != "" {
		return cfg, nil
	}
	if _, _, ok := clusterclient.TokenTimes(cfg.BearerToken); !ok {
		return cfg, nil
	}
	holder := &bearerToken{token: cfg.BearerToken}
	out := rest.CopyConfig(cfg)
	out.BearerToken = ""
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper { return bearerRoundTripper{token: holder, next: rt} })
	return out, holder
}

// TokenStore keeps a renewed token where the agent reads its hub
// kubeconfig at start.
type TokenStore interface {
	// Store writes token into the stored kubeconfig, for its current
	// context's user.
	Store(ctx context.Context, token string) error
}

// withToken returns kubeconfig with the token of its current context's
// user replaced by token; every other byte of meaning is kept.
func withToken(kubeconfig []byte, token string) ([]byte, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the hub kubeconfig: %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("the hub kubeconfig has no current context (current-context %q): set it to the context `shepherd register` wrote", cfg.CurrentContext)
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok || user.Token == "" {
		return nil, fmt.Errorf("the hub kubeconfig's user %q has no token to renew", ctx.AuthInfo)
	}
	user.Token = token
	return clientcmd.Write(*cfg)
}

// FileTokenStore stores renewed tokens in a kubeconfig file, replaced
// atomically (a new file in the same directory, renamed over the old).
type FileTokenStore struct{ Path string }

func (s FileTokenStore) Store(_ context.Context, token string) error {
	old, err := os.ReadFile(s.Path)
	if err != nil {
		return err
	}
	data, err := withToken(old, token)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), "."+filepath.Base(s.Path)+".*")
	if err != nil {
		return fmt.Errorf("storing the renewed token beside %s (is the directory writable? in a pod, pass --hub-kubeconfig-secret): %w", s.Path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.Path)
}

// SecretTokenStore stores renewed tokens in the key "kubeconfig" of a
// Secret in the member (the one the agent's pod mounts its hub kubeconfig
// from; the kubelet refreshes the mounted file).
type SecretTokenStore struct {
	Member          kubernetes.Interface
	Namespace, Name string
}

func (s SecretTokenStore) Store(ctx context.Context, token string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := s.Member.CoreV1().Secrets(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		data, err := withToken(sec.Data["kubeconfig"], token)
		if err != nil {
			return fmt.Errorf("Secret %s/%s key kubeconfig: %w", s.Namespace, s.Name, err)
		}
		sec.Data["kubeconfig"] = data
		_, err = s.Member.CoreV1().Secrets(s.Namespace).Update(ctx, sec, metav1.UpdateOptions{})
		return err
	})
}

// tokenRenewer renews the agent's hub token (see above).
type tokenRenewer struct {
	hub     kubernetes.Interface // authenticates with token
	token   *bearerToken
	cluster string
	store   TokenStore // nil: the renewed token lives in memory only
	log     logr.Logger
	now     func() time.Time
}

// renew requests a new token of the current one's lifetime, switches to it
// and stores it. It returns when the new token is due for renewal.
func (r *tokenRenewer) renew(ctx context.Context) (time.Time, error) {
	issued, expires, ok := clusterclient.TokenTimes(r.token.get())
	if !ok {
		return time.Time{}, errors.New("the current token has no issue and expiry times")
	}
	seconds := int64(expires.Sub(issued) / time.Second)
	ns := names.ExecutionNamespace(r.cluster)
	tr, err := r.hub.CoreV1().ServiceAccounts(ns).CreateToken(ctx, clusterv1alpha1.AgentServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if apierrors.IsForbidden(err) {
		return time.Time{}, fmt.Errorf("the hub does not let the agent renew its token (a registration older than token renewal): run `shepherd register %s --force` for credentials that may, and give them to the agent (--deploy does): %w", r.cluster, err)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("requesting a new token of ServiceAccount %s/%s: %w", ns, clusterv1alpha1.AgentServiceAccountName, err)
	}
	newIssued, newExpires, ok := clusterclient.TokenTimes(tr.Status.Token)
	if !ok {
		return time.Time{}, errors.New("the hub issued a token without issue and expiry times")
	}
	r.token.set(tr.Status.Token)
	r.log.Info("renewed the agent's hub token", "expires", newExpires.UTC().Format(time.RFC3339))
	if r.store != nil {
		if err := r.store.Store(ctx, tr.Status.Token); err != nil {
			// The running agent uses the new token; only a restart would
			// start with the old one, which still works until it expires.
			return renewAt(newIssued, newExpires), fmt.Errorf("storing the renewed token (the running agent uses it; a restart would read the old one): %w", err)
		}
	}
	return renewAt(newIssued, newExpires), nil
}

// run renews the token whenever it is due, until ctx ends.
func (r *tokenRenewer) run(ctx context.Context) {
	issued, expires, _ := clusterclient.TokenTimes(r.token.get())
	due := renewAt(issued, expires)
	backoff := renewRetryMin
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(due.Sub(r.now()), 0)):
		}
		next, err := r.renew(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && next.IsZero():
			r.log.Error(err, "renewing the agent's hub token; trying again", "after", backoff, "expires", expires.UTC().Format(time.RFC3339))
			due = r.now().Add(backoff)
			backoff = min(2*backoff, renewRetryMax)
			continue
		case err != nil:
			r.log.Error(err, "renewing the agent's hub token")
		}
		due, backoff = next, renewRetryMin
		_, expires, _ = clusterclient.TokenTimes(r.token.get())
	}
}
