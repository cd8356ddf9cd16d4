package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/pkg/actions"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Hub is the configuration the dashboard was started with: its address
	// and CA serve every request; its credentials only requests without a
	// token, and only when RequireToken is false.
	Hub *rest.Config
	// Source gives the pages their data.
	Source Source
	// ReadOnly removes every action.
	ReadOnly bool
	// RequireToken asks every request for a bearer token, checked against
	// the hub; set it when the dashboard listens beyond loopback.
	RequireToken bool
	// WhatIfTimeout is how long a what-if may take before it is answered
	// 504 (DefaultWhatIfTimeout when zero).
	WhatIfTimeout time.Duration
	// Interpreter is what the dashboard knows of kinds: a copy's ready
	// replicas on the pages, a template's replicas and requests in a
	// what-if. Nil: a new one, as the controller manager makes (the
	// built-in kinds until something teaches it more).
	Interpreter interpreter.Interpreter
	Logger      logr.Logger
}

// DefaultWhatIfTimeout is how long a what-if may take: well within a
// browser's patience and the 30 s a load balancer in front commonly
// allows a response.
const DefaultWhatIfTimeout = 20 * time.Second

// Server serves the dashboard.
type Server struct {
	opts  Options
	users *users
	pages *pages
	mux   *http.ServeMux
}

// New builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Hub == nil || opts.Source == nil {
		return nil, errors.New("dashboard: Hub and Source are required")
	}
	if opts.WhatIfTimeout <= 0 {
		opts.WhatIfTimeout = DefaultWhatIfTimeout
	}
	if opts.Interpreter == nil {
		opts.Interpreter = interpreter.New()
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	u, err := newUsers(opts.Hub, opts.RequireToken)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, users: u, pages: p, mux: http.NewServeMux()}
	static, _ := fs.Sub(assets, "assets/static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	s.mux.HandleFunc("GET /login", s.login)
	s.mux.HandleFunc("POST /login", s.signIn)
	s.mux.HandleFunc("POST /logout", s.signOut)
	s.mux.HandleFunc("GET /{$}", s.read(s.fleet))
	s.mux.HandleFunc("GET /workloads", s.read(s.workloads))
	s.mux.HandleFunc("GET /workloads/ns/{namespace}/{name}", s.read(s.workload))
	s.mux.HandleFunc("GET /workloads/cluster/{name}", s.read(s.workload))
	s.mux.HandleFunc("GET /services", s.read(s.services))
	s.mux.HandleFunc("GET /autoscalers", s.read(s.autoscalers))
	s.mux.HandleFunc("GET /autoscalers/{namespace}/{name}", s.read(s.autoscaler))
	s.mux.HandleFunc("GET /failover", s.read(s.failover))
	s.mux.HandleFunc("GET /whatif", s.read(s.whatIfForm))
	s.mux.HandleFunc("POST /whatif", s.post(s.whatIf))
	s.mux.HandleFunc("GET /events", s.events)
	s.mux.HandleFunc("POST /actions/confirm", s.action(s.confirm))
	s.mux.HandleFunc("POST /actions/reschedule", s.action(s.reschedule))
	s.mux.HandleFunc("POST /actions/rollout", s.action(s.rollout))
	return s, nil
}

// ServeHTTP implements http.Handler, with headers that keep the pages out
// of frames and other origins' scripts.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	if !s.opts.RequireToken && !loopbackHost(r.Host) {
		http.Error(w, fmt.Sprintf("Host %q refused: without tokens the dashboard answers only to localhost, 127.0.0.1 or [::1]; to serve other names, listen beyond loopback (every request then needs a token)", r.Host), http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// view is what a page handler returns: the page to render and its data.
type view struct {
	page  string
	title string
	data  any
	// status is the HTTP status (200 when zero).
	status int
	err    string
}

// gate says which checks a request passes before its handler runs.
type gate struct {
	// post: a form, which must carry the CSRF token.
	post bool
	// action: a change, refused in read-only mode.
	action bool
	// body bounds a form's size (formBody when zero).
	body bodyLimit
}

// bodyLimit bounds a form's body; tooLarge is the answer (413) to one over.
type bodyLimit struct {
	bytes    int64
	tooLarge string
}

var (
	// formBody bounds the forms of actions: a few short fields.
	formBody = bodyLimit{64 << 10, "the form is over 64 KiB, far more than the dashboard's forms send"}
	// whatIfBody bounds the what-if's form: a policy of maxWhatIfBytes,
	// URL-encoded (at most three bytes each), and the CSRF token.
	whatIfBody = bodyLimit{3*maxWhatIfBytes + 4<<10, whatIfTooLarge}
)

// readForm reads a POSTed form, refusing one over its limit with 413 and the
// limit named. It runs before anything reads a field: a form cut off at
// net/http's own 10 MB would lose its CSRF token and be refused as forged.
func readForm(w http.ResponseWriter, r *http.Request, l bodyLimit) (int, error) {
	if l.bytes == 0 {
		l = formBody
	}
	if r.ContentLength > l.bytes {
		return http.StatusRequestEntityTooLarge, errors.New(l.tooLarge)
	}
	r.Body = http.MaxBytesReader(w, r.Body, l.bytes)
	err := r.ParseForm()
	if err == nil && strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(l.bytes)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, errors.New(l.tooLarge)
	case err != nil:
		return http.StatusBadRequest, fmt.Errorf("the form could not be read: %v", err)
	}
	return 0, nil
}

// admit runs a request's checks in order (read-only mode for actions, the
// size of forms and their CSRF token, the identity), then reads the
// snapshot. When one fails it answers the request itself and returns false.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, g gate) (identity, *Snapshot, bool) {
	id := identity{token: tokenOf(r)}
	if g.action && s.opts.ReadOnly {
		s.refuse(w, r, http.StatusForbidden, errors.New("the dashboard is read-only: actions are off"))
		return id, nil, false
	}
	if g.post {
		if status, err := readForm(w, r, g.body); err != nil {
			s.refuse(w, r, status, err)
			return id, nil, false
		}
		if err := checkCSRF(r); err != nil {
			s.refuse(w, r, http.StatusForbidden, err)
			return id, nil, false
		}
	}
	if err := s.users.check(r.Context(), id); err != nil {
		s.denied(w, r, err)
		return id, nil, false
	}
	snap, err := s.opts.Source.Snapshot(r.Context())
	if err != nil {
		s.render(w, r, view{page: "error", title: "The hub's objects could not be read", status: http.StatusBadGateway, err: err.Error()})
		return id, nil, false
	}
	return id, snap, true
}

// refuse answers with an error page.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	s.render(w, r, view{page: "error", title: "Refused", status: status, err: err.Error()})
}

// read wraps a page handler: it renders the page or, for a live reload,
// its live region.
func (s *Server) read(fn func(*http.Request, *Snapshot) view) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, snap, ok := s.admit(w, r, gate{}); ok {
			s.render(w, r, fn(r, snap))
		}
	}
}

// post wraps a form handler that only reads (the what-if).
func (s *Server) post(fn func(*http.Request, *Snapshot, identity) view) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id, snap, ok := s.admit(w, r, gate{post: true, body: whatIfBody}); ok {
			s.render(w, r, fn(r, snap, id))
		}
	}
}

func (s *Server) denied(w http.ResponseWriter, r *http.Request, err error) {
	s.render(w, r, view{page: "login", title: "Sign in", status: http.StatusUnauthorized, err: err.Error()})
}

func (s *Server) fleet(_ *http.Request, snap *Snapshot) view {
	return view{page: "fleet", title: "Fleet", data: BuildFleet(snap, nil)}
}

func (s *Server) workloads(r *http.Request, snap *Snapshot) view {
	q := r.URL.Query()
	f := Filter{Namespace: q.Get("namespace"), Policy: q.Get("policy"), Cluster: q.Get("cluster"), Health: q.Get("health"), Query: q.Get("q")}
	page, _ := strconv.Atoi(q.Get("page"))
	return view{page: "workloads", title: "Workloads", data: BuildWorkloads(s.opts.Interpreter, snap, f, page)}
}

func (s *Server) workload(r *http.Request, snap *Snapshot) view {
	ref := refOf(r)
	b, ok := snap.Find(ref)
	if !ok {
		return view{page: "error", title: "No such workload", status: http.StatusNotFound,
			err: fmt.Sprintf("%s %s does not exist (any more): see the workloads page", ref.Kind(), ref)}
	}
	v := BuildWorkload(s.opts.Interpreter, snap, b)
	if r.URL.Query().Get("explain") == "all" {
		pv, err := Explain(r.Context(), s.opts.Interpreter, snap, b)
		if err != nil {
			return view{page: "workload", title: v.Row.Name, data: v, status: http.StatusInternalServerError, err: "explaining every cluster failed: " + err.Error()}
		}
		if len(pv.Workloads) == 1 {
			v.Decisions, v.Live = pv.Workloads[0].Decisions, true
		}
	}
	return view{page: "workload", title: v.Row.Name, data: v}
}

func (s *Server) services(_ *http.Request, snap *Snapshot) view {
	return view{page: "services", title: "Services", data: BuildServices(snap)}
}

func (s *Server) autoscalers(r *http.Request, snap *Snapshot) view {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return view{page: "autoscalers", title: "Autoscalers", data: BuildAutoscalers(snap, page)}
}

func (s *Server) autoscaler(r *http.Request, snap *Snapshot) view {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	v, ok := BuildAutoscaler(snap, ns, name)
	if !ok {
		return view{page: "error", title: "No such FederatedHPA", status: http.StatusNotFound,
			err: fmt.Sprintf("FederatedHPA %s/%s does not exist (any more): see the autoscalers page", ns, name)}
	}
	return view{page: "autoscaler", title: "FederatedHPA " + name, data: v}
}

func (s *Server) failover(_ *http.Request, snap *Snapshot) view {
	return view{page: "failover", title: "Failover and rescheduling", data: BuildFailover(snap)}
}

// whatIfData is the what-if page.
type whatIfData struct {
	Text string
	Plan *PlanView
}

// examplePolicy fills an empty what-if form.
const examplePolicy = `apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: what-if
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        dynamicWeight: AvailableReplicas
`

func (s *Server) whatIfForm(_ *http.Request, _ *Snapshot) view {
	return view{page: "whatif", title: "What-if", data: whatIfData{Text: examplePolicy}}
}

func (s *Server) whatIf(r *http.Request, snap *Snapshot, id identity) view {
	text := r.PostFormValue("policy")
	data := whatIfData{Text: text}
	if len(text) > maxWhatIfBytes {
		// Not echoed back: the page would carry it all again.
		return view{page: "whatif", title: "What-if", data: whatIfData{}, status: http.StatusRequestEntityTooLarge, err: whatIfTooLarge}
	}
	policy, err := ParsePolicy(text)
	if err != nil {
		return view{page: "whatif", title: "What-if", data: data, status: http.StatusBadRequest, err: err.Error()}
	}
	c, err := s.users.client(id)
	if err != nil {
		return view{page: "whatif", title: "What-if", data: data, status: http.StatusUnauthorized, err: err.Error()}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.WhatIfTimeout)
	defer cancel()
	pv, err := WhatIf(ctx, s.opts.Interpreter, c, snap, policy)
	if err != nil && timedOut(ctx, err) {
		return view{page: "whatif", title: "What-if", data: data, status: http.StatusGatewayTimeout,
			err: fmt.Sprintf("the what-if did not finish within %s (%v): plan a policy that selects fewer templates, by name or labelSelector, or fewer kinds and namespaces, or split it and plan each part", s.opts.WhatIfTimeout, err)}
	}
	if err != nil {
		return view{page: "whatif", title: "What-if", data: data, status: hubStatus(err), err: err.Error()}
	}
	data.Plan = &pv
	return view{page: "whatif", title: "What-if", data: data}
}

// timedOut reports whether err ended a what-if because its deadline came:
// the context's own error, or client-go's rate limiter refusing to wait
// past the deadline, whose error does not wrap context.DeadlineExceeded.
func timedOut(ctx context.Context, err error) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "would exceed context deadline")
}

// refOf reads the binding a workload URL names.
func refOf(r *http.Request) Ref {
	if ns := r.PathValue("namespace"); ns != "" {
		return Ref{Namespace: ns, Name: r.PathValue("name")}
	}
	return Ref{Cluster: true, Name: r.PathValue("name")}
}

// hubStatus is the HTTP status to answer for a hub error: the hub's own
// (403 when its RBAC refused) or 502.
func hubStatus(err error) int {
	var fe formError
	if errors.As(err, &fe) {
		return http.StatusBadRequest
	}
	var stale *actions.StateError
	if errors.As(err, &stale) {
		return http.StatusConflict
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Code >= 400 {
		return int(se.Status().Code)
	}
	return http.StatusBadGateway
}

// events streams a "changed" event to the tab after each coalesced change
// of the hub's objects, and a comment every 25 s to keep proxies open.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if err := s.users.check(r.Context(), identity{token: tokenOf(r)}); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, cancel := s.opts.Source.Subscribe()
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	_, _ = fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()
	keepAlive := time.NewTicker(25 * time.Second)
	defer keepAlive.Stop()
	for n := 1; ; {
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			_, _ = fmt.Fprint(w, ": keep-alive\n\n")
		case <-ch:
			_, _ = fmt.Fprintf(w, "event: changed\nid: %d\ndata: {}\n\n", n)
			n++
		}
		flusher.Flush()
	}
}

// Serve listens on listen and serves h until ctx ends; it returns the
// address it listens on once listening, and the serving error through
// errc.
func Serve(ctx context.Context, listen string, h http.Handler, certFile, keyFile string) (net.Addr, <-chan error, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, nil, err
	}
	return ln.Addr(), ServeListener(ctx, ln, h, certFile, keyFile), nil
}

// ServeListener serves h on ln until ctx ends; the serving error arrives on
// the channel.
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler, certFile, keyFile string) <-chan error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() {
		var err error
		if certFile != "" {
			err = srv.ServeTLS(ln, certFile, keyFile)
		} else {
			err = srv.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		_ = srv.Close()
	}()
	return errc
}
