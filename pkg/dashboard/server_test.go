package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// serve starts a dashboard over a static snapshot. Its hub address is not
// reachable: these tests cover what is decided before the hub is asked.
func serve(t *testing.T, opts dashboard.Options) (*httptest.Server, *http.Client) {
	t.Helper()
	if opts.Source == nil {
		opts.Source = &dashboardtest.Source{Snap: dashboardtest.Fleet(12, 30)}
	}
	opts.Hub, opts.Logger = &rest.Config{Host: "https://127.0.0.1:1"}, logr.Discard()
	s, err := dashboard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	return ts, &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// csrf reads the CSRF cookie the server set in the jar.
func csrf(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	u, _ := url.Parse(base)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "shepherd_csrf_"+u.Port() {
			return ck.Value
		}
	}
	t.Fatal("no CSRF cookie")
	return ""
}

func TestPagesRender(t *testing.T) {
	ts, c := serve(t, dashboard.Options{})
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{"12</strong> clusters", `<svg class="fleet"`, "cluster-0011"}},
		{"/workloads", []string{"30</strong> of 30 workloads", "Deployment team-00/app-00000", `aria-label="2 replicas on cluster-0000, Healthy"`}},
		{"/workloads?namespace=team-01&q=app-00021", []string{"1</strong> of 30 workloads", "team-01/app-00021"}},
		{"/workloads/ns/team-00/app-00000-deployment", []string{"Deployment team-00/app-00000", "Why these clusters", "Reschedule this workload"}},
		{"/failover", []string{"No eviction in progress.", "Reschedule a policy"}},
		{"/whatif", []string{"kind: PropagationPolicy", `name="csrf"`}},
		{"/login", []string{"Paste a bearer token"}},
	} {
		code, body := get(t, c, ts.URL+tc.path)
		if code != http.StatusOK {
			t.Errorf("%s: status %d", tc.path, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", tc.path, w)
			}
		}
	}
	if code, body := get(t, c, ts.URL+"/workloads/ns/team-00/nope"); code != http.StatusNotFound || !strings.Contains(body, "does not exist") {
		t.Errorf("missing workload: %d", code)
	}
}

// readyFromInterpreter says every copy has 4321 ready replicas: a
// dashboard given it shows what no status in the fixture says (a multiple
// of 4321, one per copy).
type readyFromInterpreter struct{ interpreter.Interpreter }

func (readyFromInterpreter) ReadyReplicas(schema.GroupKind, *runtime.RawExtension) (int32, bool) {
	return 4321, true
}

// TestPagesReadThroughTheServersInterpreter: the pages read the copies'
// ready replicas with the interpreter the server holds (Options), not
// with a rule or an interpreter of their own, so that a kind taught to
// it reads the same on every page.
func TestPagesReadThroughTheServersInterpreter(t *testing.T) {
	snap := dashboardtest.Fleet(12, 30)
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}, Interpreter: readyFromInterpreter{interpreter.New()}})
	copies := len(snap.Bindings[0].Obj.GetBindingStatus().AggregatedStatus)
	if snap.Bindings[0].Obj.GetName() != "app-00000-deployment" || copies == 0 {
		t.Fatalf("the fixture's first binding is %s with %d copies", snap.Bindings[0].Obj.GetName(), copies)
	}
	want := fmt.Sprintf("%d / ", 4321*copies)
	for _, path := range []string{"/workloads?q=app-00000", "/workloads/ns/team-00/app-00000-deployment"} {
		if code, body := get(t, c, ts.URL+path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s (status %d) does not show the interpreter's ready replicas, %q", path, code, want)
		}
	}
}

// A live reload gets the live region alone, not the layout.
func TestFragment(t *testing.T) {
	ts, c := serve(t, dashboard.Options{})
	_, body := get(t, c, ts.URL+"/workloads", "X-Shepherd-Fragment", "1")
	if strings.Contains(body, "<html") || strings.Contains(body, "<nav") || !strings.Contains(body, "app-00000") {
		t.Errorf("fragment is not the live region alone:\n%.300s", body)
	}
}

func post(t *testing.T, c *http.Client, u string, form url.Values, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Actions are refused before the hub is asked: in read-only mode, without
// the CSRF token, from another origin, without a token where one is
// required, and with a form naming nothing.
func TestActionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   dashboard.Options
		path   string
		form   func(token string) url.Values
		header []string
		code   int
		want   string
	}{
		{"read-only", dashboard.Options{ReadOnly: true}, "/actions/reschedule",
			func(tok string) url.Values { return url.Values{"csrf": {tok}, "policy": {"ns/p"}} }, nil, http.StatusForbidden, "read-only"},
		{"no CSRF token", dashboard.Options{}, "/actions/reschedule",
			func(string) url.Values { return url.Values{"policy": {"ns/p"}} }, nil, http.StatusForbidden, "CSRF token does not match"},
		{"wrong CSRF token", dashboard.Options{}, "/actions/confirm",
			func(string) url.Values { return url.Values{"csrf": {strings.Repeat("0", 64)}} }, nil, http.StatusForbidden, "CSRF token does not match"},
		{"other origin", dashboard.Options{}, "/actions/reschedule",
			func(tok string) url.Values { return url.Values{"csrf": {tok}, "policy": {"ns/p"}} }, []string{"Origin", "https://evil.example"}, http.StatusForbidden, "cross-origin"},
		{"cross-site", dashboard.Options{}, "/actions/reschedule",
			func(tok string) url.Values { return url.Values{"csrf": {tok}, "policy": {"ns/p"}} }, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "cross-site"},
		{"token required", dashboard.Options{RequireToken: true}, "/actions/reschedule",
			func(tok string) url.Values { return url.Values{"csrf": {tok}, "policy": {"ns/p"}} }, nil, http.StatusUnauthorized, "bearer token is needed"},
		{"what-if needs CSRF too", dashboard.Options{}, "/whatif",
			func(string) url.Values { return url.Values{"policy": {"x"}} }, nil, http.StatusForbidden, "CSRF"},
		{"sign-in needs CSRF too", dashboard.Options{}, "/login",
			func(string) url.Values { return url.Values{"token": {"x"}} }, nil, http.StatusForbidden, "CSRF"},
		{"empty token", dashboard.Options{}, "/login",
			func(tok string) url.Values { return url.Values{"csrf": {tok}, "token": {"  "}} }, nil, http.StatusBadRequest, "paste a bearer token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, c := serve(t, tc.opts)
			get(t, c, ts.URL+"/login")
			code, body := post(t, c, ts.URL+tc.path, tc.form(csrf(t, c, ts.URL)), tc.header...)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("status %d, want %d; body lacks %q:\n%.400s", code, tc.code, tc.want, body)
			}
		})
	}
}

// Bad forms get 400 and a message naming the field.
func TestActionFormErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		form url.Values
		want string
	}{
		{"reschedule names nothing", "/actions/reschedule", url.Values{}, "names no workload (binding) and no policy"},
		{"reschedule bad binding path", "/actions/reschedule", url.Values{"binding": {"/elsewhere"}}, "want /workloads/ns/NAMESPACE/NAME"},
		{"reschedule unknown binding", "/actions/reschedule", url.Values{"binding": {"/workloads/ns/a/b"}}, "does not exist"},
		{"reschedule bad policy", "/actions/reschedule", url.Values{"policy": {"a/b/c"}}, "give NAMESPACE/NAME"},
		{"confirm without cluster", "/actions/confirm", url.Values{"binding": {"/workloads/ns/a/b"}}, "cluster: name the cluster"},
		{"confirm bad binding", "/actions/confirm", url.Values{"binding": {"/workloads/cluster/"}, "cluster": {"x"}}, "want /workloads/ns/NAMESPACE/NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, c := serve(t, dashboard.Options{})
			get(t, c, ts.URL+"/")
			tc.form.Set("csrf", csrf(t, c, ts.URL))
			code, body := post(t, c, ts.URL+tc.path, tc.form)
			if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Errorf("status %d, want 400; body lacks %q:\n%.400s", code, tc.want, body)
			}
		})
	}
}

// Without a token where one is required, every page asks for one and no
// fleet data is shown.
func TestTokenRequiredForPages(t *testing.T) {
	ts, c := serve(t, dashboard.Options{RequireToken: true})
	for _, p := range []string{"/", "/workloads", "/services", "/autoscalers", "/failover", "/whatif", "/workloads/ns/team-00/app-00000-deployment"} {
		code, body := get(t, c, ts.URL+p)
		if code != http.StatusUnauthorized || strings.Contains(body, "cluster-0000") {
			t.Errorf("%s: status %d, want 401 without fleet data", p, code)
		}
	}
	if code, _ := get(t, c, ts.URL+"/events"); code != http.StatusUnauthorized {
		t.Errorf("/events: status %d, want 401", code)
	}
}

// Read-only mode shows no action.
func TestReadOnlyHidesActions(t *testing.T) {
	snap := dashboardtest.Fleet(3, 1)
	spec := snap.Bindings[0].Obj.GetBindingSpec()
	spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "cluster-0002", PurgeMode: "Never", CreationTimestamp: metav1.Now()}}
	for _, ro := range []bool{false, true} {
		ts, c := serve(t, dashboard.Options{ReadOnly: ro, Source: &dashboardtest.Source{Snap: snap}})
		for _, p := range []string{"/failover", "/workloads/ns/team-00/app-00000-deployment"} {
			_, body := get(t, c, ts.URL+p)
			if has := strings.Contains(body, `action="/actions/`); has == ro {
				t.Errorf("read-only %t: %s has actions %t", ro, p, has)
			}
			if !strings.Contains(body, "awaiting confirmation") {
				t.Errorf("%s does not show the eviction awaiting confirmation", p)
			}
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:80": true, "[::1]:8080": true, "127.0.0.2:1": true,
		"0.0.0.0:8080": false, ":8080": false, "10.0.0.1:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := dashboard.IsLoopback(listen); got != want {
			t.Errorf("IsLoopback(%q) = %t, want %t", listen, got, want)
		}
	}
}

func TestParsePolicyRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "  ", "paste a PropagationPolicy"},
		{"not yaml", "a: [", "not YAML"},
		{"other kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}", `kind "ConfigMap"`},
		{"old group", "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: x}", "use policy.shepherd.io/v1alpha1"},
		{"unknown field", "apiVersion: policy.shepherd.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: x}\nspec: {placment: {}}", "placment"},
		{"no name", "apiVersion: policy.shepherd.io/v1alpha1\nkind: PropagationPolicy\nspec: {}", "metadata.name is empty"},
		{"too large", "apiVersion: policy.shepherd.io/v1alpha1\nkind: PropagationPolicy\n#" + strings.Repeat("x", 300<<10), "the policy is over 256 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dashboard.ParsePolicy(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	obj, err := dashboard.ParsePolicy("apiVersion: policy.shepherd.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: x}\nspec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]}")
	if err != nil || obj.GetNamespace() != "default" {
		t.Errorf("a valid policy: %v, namespace %q (want default)", err, obj.GetNamespace())
	}
}

func TestParseRefPath(t *testing.T) {
	for p, want := range map[string]string{
		"/workloads/ns/a/b": "ResourceBinding a/b", "/workloads/cluster/c": "ClusterResourceBinding c",
		"/workloads/ns/a": "", "/workloads/ns//b": "", "/workloads/cluster/": "", "/workloads/ns/a/b/c": "", "/x": "",
	} {
		r, err := dashboard.ParseRefPath(p)
		got := ""
		if err == nil {
			got = r.Kind() + " " + r.String()
		}
		if got != want {
			t.Errorf("ParseRefPath(%q) = %q (%v), want %q", p, got, err, want)
		}
	}
}

// Works reach the pages without their manifests: a Secret's data is never
// in the cache the pages read.
func TestWorksCachedWithoutManifests(t *testing.T) {
	w := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
		{RawExtension: runtime.RawExtension{Raw: []byte(`{"kind":"Secret","data":{"password":"c2VjcmV0"}}`)}},
	}}}, Status: workv1alpha1.WorkStatus{ManifestStatuses: []workv1alpha1.ManifestStatus{{Status: &runtime.RawExtension{Raw: []byte(`{}`)}}}}}
	out, err := dashboard.StripWork(w)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*workv1alpha1.Work)
	if len(got.Spec.Workload.Manifests) != 0 || got.Status.ManifestStatuses[0].Status != nil {
		t.Errorf("manifests kept: %+v", got)
	}
}

// Without tokens the dashboard answers only to this machine's names: a
// site whose name points at 127.0.0.1 (DNS rebinding) gets nothing.
func TestLoopbackRefusesOtherHosts(t *testing.T) {
	ts, c := serve(t, dashboard.Options{})
	for host, want := range map[string]int{
		"": http.StatusOK, "localhost:8080": http.StatusOK, "127.0.0.1": http.StatusOK, "[::1]:8080": http.StatusOK,
		"evil.example": http.StatusForbidden, "evil.example:8080": http.StatusForbidden, "10.0.0.1:8080": http.StatusForbidden,
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/workloads", nil)
		if host != "" {
			req.Host = host
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want != http.StatusOK && strings.Contains(string(b), "cluster-0000")) {
			t.Errorf("Host %q: status %d, want %d", host, resp.StatusCode, want)
		}
	}
	// With tokens required the Host is not what protects the fleet: the
	// token is.
	ts, c = serve(t, dashboard.Options{RequireToken: true})
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/login", nil)
	req.Host = "dashboard.example.com"
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("a named host with tokens required: %v %v", resp, err)
	}
}

// Cookies carry the port: two dashboards on one machine keep their own
// tokens.
func TestCookiesPerPort(t *testing.T) {
	ts, c := serve(t, dashboard.Options{})
	get(t, c, ts.URL+"/")
	u, _ := url.Parse(ts.URL)
	var names []string
	for _, ck := range c.Jar.Cookies(u) {
		names = append(names, ck.Name)
	}
	if len(names) != 1 || names[0] != "shepherd_csrf_"+u.Port() {
		t.Errorf("cookies %v, want shepherd_csrf_%s", names, u.Port())
	}
}

// A flash message comes only from the dashboard's own redirect, never from
// the URL.
func TestNoMessagesFromTheURL(t *testing.T) {
	ts, c := serve(t, dashboard.Options{})
	_, body := get(t, c, ts.URL+"/?done=Session+expired&failed=Re-enter+your+token+at+evil.example")
	if strings.Contains(body, "Session expired") || strings.Contains(body, "evil.example") {
		t.Error("the page shows a message from its URL")
	}
}

// A live explanation that cannot be made says so with 500, on the page.
func TestExplainAllFailure(t *testing.T) {
	snap := dashboardtest.Fleet(2, 1)
	snap.Clusters = nil // nothing to place on
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}})
	code, body := get(t, c, ts.URL+"/workloads/ns/team-00/app-00000-deployment?explain=all")
	if code != http.StatusInternalServerError || !strings.Contains(body, "explaining every cluster failed") {
		t.Errorf("status %d, want 500 with the error; body:\n%.300s", code, body)
	}
}

// fakeHub answers discovery for apps/v1 Deployments and lists them: in
// namespace "slow" only when the request ends (a hub that does not
// answer), in "many" 501 of them, elsewhere none.
func fakeHub(t *testing.T) *rest.Config {
	t.Helper()
	release := make(chan struct{})
	write := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api", func(w http.ResponseWriter, _ *http.Request) {
		write(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}`)
	})
	mux.HandleFunc("/apis", func(w http.ResponseWriter, _ *http.Request) {
		write(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}`)
	})
	mux.HandleFunc("/apis/apps/v1", func(w http.ResponseWriter, _ *http.Request) {
		write(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get","list","watch"]}]}`)
	})
	mux.HandleFunc("/apis/apps/v1/namespaces/{ns}/deployments", func(w http.ResponseWriter, r *http.Request) {
		var items []string
		switch ns := r.PathValue("ns"); ns {
		case "slow":
			select {
			case <-r.Context().Done():
				return
			case <-release:
			}
		case "many":
			for i := range 501 {
				items = append(items, fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web-%d","namespace":%q},"spec":{"replicas":1}}`, i, ns))
			}
		}
		write(w, `{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{},"items":[`+strings.Join(items, ",")+`]}`)
	})
	hub := httptest.NewServer(mux)
	t.Cleanup(hub.Close)
	t.Cleanup(func() { close(release) }) // runs first: a hung list ends
	return &rest.Config{Host: hub.URL}
}

// policyText is a PropagationPolicy in ns whose resourceSelectors are sels;
// its annotations are an anchor, d, of a Deployment selector's fields.
func policyText(ns string, sels ...string) string {
	return "apiVersion: policy.shepherd.io/v1alpha1\nkind: PropagationPolicy\n" +
		"metadata: {name: p, namespace: " + ns + ", annotations: &d {apiVersion: apps/v1, kind: Deployment}}\n" +
		"spec:\n  resourceSelectors: [" + strings.Join(sels, ",") + "]\n"
}

// A what-if too large to read or to answer in time is refused with the
// bound it is over and what to do: 413 for a body over the limit (before
// the CSRF check, which would otherwise find the token cut off), 400 for
// more selectors or templates than a what-if takes, 504 when the hub does
// not answer within the what-if's deadline.
func TestWhatIfBounds(t *testing.T) {
	// 5,500 selectors, each naming a Deployment, in 100 KiB: each merges
	// the apiVersion and kind of the anchor in policyText.
	var named []string
	for i := range 5500 {
		named = append(named, fmt.Sprintf("{<<: *d, name: d%d}", i))
	}
	all := "{apiVersion: apps/v1, kind: Deployment}"
	form := func(policy string) func(string) io.Reader {
		return func(tok string) io.Reader {
			return strings.NewReader(url.Values{"csrf": {tok}, "policy": {policy}}.Encode())
		}
	}
	huge := form(policyText("default", all) + "#" + strings.Repeat("x", 20<<20))
	for _, tc := range []struct {
		name string
		body func(csrf string) io.Reader
		// chunked hides the body's length.
		chunked bool
		// timeout is the what-if's (the default when zero).
		timeout time.Duration
		code    int
		want    string
	}{
		{"20 MB form", huge, false, 0, http.StatusRequestEntityTooLarge, "the policy is over 256 KiB"},
		{"20 MB form of unknown length", huge, true, 0, http.StatusRequestEntityTooLarge, "the policy is over 256 KiB"},
		{"policy over 256 KiB in a form under the limit", form(policyText("default", all) + "#" + strings.Repeat("x", 300<<10)), false, 0,
			http.StatusRequestEntityTooLarge, "the policy is over 256 KiB"},
		{"5,500 named selectors", form(policyText("default", named...)), false, 0, http.StatusBadRequest,
			"spec.resourceSelectors has 5500 selectors, more than the 100 a policy may have"},
		{"101 selectors", form(policyText("default", named[:101]...)), false, 0, http.StatusBadRequest, "more than the 100 a policy may have"},
		{"501 templates", form(policyText("many", all)), false, 0, http.StatusBadRequest, "the policy selects 501 templates, more than the 500 a what-if places"},
		{"a hub that does not answer", form(policyText("slow", all)), false, 50 * time.Millisecond, http.StatusGatewayTimeout, "the what-if did not finish within 50ms"},
		{"100 named selectors", form(policyText("default", named[:100]...)), false, 0, http.StatusOK, "What-if"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := dashboard.New(dashboard.Options{Hub: fakeHub(t), Source: &dashboardtest.Source{Snap: dashboardtest.Fleet(3, 0)},
				WhatIfTimeout: tc.timeout, Logger: logr.Discard()})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s)
			t.Cleanup(ts.Close)
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar}
			get(t, c, ts.URL+"/whatif")
			body := tc.body(csrf(t, c, ts.URL))
			if tc.chunked {
				body = struct{ io.Reader }{body}
			}
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/whatif", body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
				t.Errorf("status %d, want %d; body lacks %q:\n%.600s", resp.StatusCode, tc.code, tc.want, b)
			}
		})
	}
}

// The workloads page shows a ConfigMap's copies by state, with no replica
// count: Applied in one member, the Work's reason (Conflict) in the other.
func TestWorkloadsPageShowsCopyStates(t *testing.T) {
	snap := dashboardtest.Fleet(2, 0)
	b := dashboardtest.Binding("team-00", "settings", "p",
		workv1alpha1.TargetCluster{Name: "cluster-0000", State: workv1alpha1.TargetBound},
		workv1alpha1.TargetCluster{Name: "cluster-0001", State: workv1alpha1.TargetBound})
	spec, status := b.Obj.GetBindingSpec(), b.Obj.GetBindingStatus()
	spec.Resource.APIVersion, spec.Resource.Kind = "v1", "ConfigMap"
	status.AggregatedStatus = []workv1alpha1.AggregatedStatusItem{
		{ClusterName: "cluster-0000", Applied: true},
		{ClusterName: "cluster-0001", AppliedReason: "Conflict"},
	}
	snap.Bindings = append(snap.Bindings, b)
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}})
	_, body := get(t, c, ts.URL+"/workloads")
	for _, want := range []string{
		`aria-label="cluster-0000, Applied"`, `<span class="state applied">Applied</span>`,
		`aria-label="cluster-0001, Conflict"`, `<span class="state unhealthy">Conflict</span>`,
		`<span class="health unhealthy">Unhealthy</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the workloads page lacks %q", want)
		}
	}
	if strings.Contains(body, `replicas on cluster-0000`) {
		t.Error("a ConfigMap's bar counts replicas")
	}
}
