package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/test/browserenv"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// waitTimeout bounds a wait for the page to show something.
const waitTimeout = 2 * time.Minute

// open opens url in a new tab of width x height pixels and waits for the
// page.
func open(t *testing.T, url string, width, height int64) context.Context {
	t.Helper()
	ctx := browserenv.Tab(t, browser)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	return ctx
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitJS waits until a JavaScript expression is true in the tab. It asks
// again while the tab navigates (an evaluation then fails).
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var last error
	for time.Now().Before(deadline) {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(attempt, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if ctx.Err() != nil {
			break
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("waiting for %s (%s): not true within %s (last error: %v)\npage text:\n%.2000s", what, expr, waitTimeout, last, pageText(ctx))
}

// pageText is the tab's visible text, for failure messages.
func pageText(ctx context.Context) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
	return s
}

// html is the tab's whole document.
func html(t *testing.T, ctx context.Context) string {
	return eval[string](t, ctx, "document.documentElement.outerHTML")
}

// shot saves a screenshot of the tab as NAME.png into $SHEPHERD_SCREENSHOTS,
// when it is set.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("SHEPHERD_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := browserenv.Screenshot(ctx, filepath.Join(dir, name+".png")); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func applyYAML(t *testing.T, yaml string) { t.Helper(); fleetenv.ApplyYAML(t, hub, "browser", yaml) }

// policyYAML propagates kind NAME of namespace ns with placement.
func policyYAML(ns, name, apiVersion, kind, target, placement string) string {
	return fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: %s, kind: %s, name: %s}
  placement:
%s`, name, ns, apiVersion, kind, target, placement)
}

// waitBound waits until the binding of the template has active targets on
// every cluster in want and is applied.
func waitBound(t *testing.T, ns, bindingName string, want ...string) *workv1alpha1.ResourceBinding {
	t.Helper()
	rb := &workv1alpha1.ResourceBinding{}
	fleetenv.Eventually(t, "binding "+ns+"/"+bindingName+" bound to "+strings.Join(want, ","), func() error {
		if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: bindingName}, rb); err != nil {
			return err
		}
		got := fleetenv.ActiveTargets(rb.Spec.Clusters)
		for _, c := range want {
			if _, ok := got[c]; !ok {
				return fmt.Errorf("targets %v", got)
			}
		}
		return nil
	})
	return rb
}

// tokenFor applies examples/dashboard/FILE.yaml, the RBAC docs/dashboard.md
// gives, and returns a token of its ServiceAccount, dashboard-FILE.
func tokenFor(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "dashboard", file+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	applyYAML(t, string(data))
	cs, err := kubernetes.NewForConfig(env.Fleet.Hub.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(context.Background(), "dashboard-"+file, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// submit clicks the button sel, which submits a form, and waits for the
// page the server answers with.
func submit(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	eval[bool](t, ctx, "window.__before = true")
	// Live updates replace parts of the page: the node a click finds can
	// be gone when the click lands ("Could not find node"). A user would
	// click again; so does the test, a few times.
	var err error
	for range 5 {
		if err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err == nil || !strings.Contains(err.Error(), "Could not find node") {
			break
		}
	}
	if err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
	waitJS(t, ctx, "the answer to "+sel, `window.__before === undefined && document.readyState === 'complete'`)
}

// navigate loads url in the tab and waits for it.
func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
}

// signIn signs the tab in with token on the dashboard at url.
func signIn(t *testing.T, ctx context.Context, url, token string) {
	t.Helper()
	navigate(t, ctx, url+"/login")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#token"), token)); err != nil {
		t.Fatalf("signing in: %v", err)
	}
	submit(t, ctx, `form.whatif button[type=submit]`)
}
