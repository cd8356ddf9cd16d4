package browser

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// The shop namespace: web (4 replicas divided over member1 and member2)
// and a Secret on member1 whose value must never reach a page.
const (
	shopNS      = "shop"
	secretValue = "dashboard-must-not-show-this"
)

var shopOnce sync.Once

func shop(t *testing.T) {
	t.Helper()
	shopOnce.Do(func() {
		fleetenv.CreateNamespace(t, hub, shopNS)
		applyYAML(t, fleetenv.DeploymentYAML(shopNS, "web", 4))
		applyYAML(t, policyYAML(shopNS, "web", "apps/v1", "Deployment", "web", `    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
`))
		applyYAML(t, `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: shop}
stringData: {password: `+secretValue+`}
`)
		applyYAML(t, policyYAML(shopNS, "db", "v1", "Secret", "db", "    clusterAffinity: {clusterNames: [member1]}\n"))
		// web's autoscalers: a FederatedHPA whose minimum is web's 4
		// replicas (the members' simulated load is low), and a
		// CronFederatedHPA whose one rule is suspended: web stays at 4.
		applyYAML(t, `apiVersion: autoscaling.shepherd.io/v1alpha1
kind: FederatedHPA
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 4
  maxReplicas: 8
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
---
apiVersion: autoscaling.shepherd.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: nightly, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: autoscaling.shepherd.io/v1alpha1, kind: FederatedHPA, name: web}
  rules:
  - {name: night, schedule: "0 22 * * *", targetMinReplicas: 2, suspend: true}
`)
		waitBound(t, shopNS, "web-deployment", "member1", "member2")
		waitBound(t, shopNS, "db-secret", "member1")
	})
}

// pages lists every page with what it must show for the shop namespace.
var pages = []struct {
	name  string
	path  string
	ready string // a JavaScript condition true once the page shows its data
}{
	{"fleet", "/", `document.querySelector('tr[data-cluster="member1"] td.state') !== null && document.querySelectorAll('svg.fleet a[data-cluster]').length === 3`},
	{"workloads", "/workloads?namespace=shop", `document.querySelector('tr[data-workload="shop/web"] ul.bars li') !== null`},
	{"workload", "/workloads/ns/shop/web-deployment", `document.querySelectorAll('table.works tbody tr').length === 2 && document.querySelectorAll('svg.fleet rect.placed').length === 2`},
	{"failover", "/failover", `document.querySelector('table.tasks') !== null`},
	{"autoscalers", "/autoscalers", `document.querySelector('tr[data-autoscaler="shop/web"]') !== null && document.querySelector('tr[data-schedule="shop/nightly/night"]') !== null`},
	{"autoscaler", "/autoscalers/shop/web", `document.querySelectorAll('table.members tbody tr[data-cluster]').length === 2`},
	{"whatif", "/whatif", `document.querySelector('#policy').value.includes('PropagationPolicy')`},
}

// Every page renders the live fleet's data, at 1280 px and at 390 px wide
// without the page scrolling sideways (wide tables scroll in their box).
func TestPagesRender(t *testing.T) {
	shop(t)
	for _, p := range pages {
		for _, width := range []int64{1280, 390} {
			t.Run(p.name+"/"+itoa(width), func(t *testing.T) {
				ctx := open(t, base+p.path, width, 900)
				waitJS(t, ctx, p.name+" shows its data", p.ready)
				if overflow := eval[float64](t, ctx, "document.documentElement.scrollWidth - window.innerWidth"); overflow > 0 {
					t.Errorf("the page is %v px wider than the %d px window", overflow, width)
				}
				name := p.name
				if width == 390 {
					name += "-narrow"
				}
				shot(t, ctx, name)
			})
		}
	}
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// The workload page explains the placement: the stored decisions, then
// every cluster on the live fleet, with the filter that rejected member3.
func TestWorkloadExplains(t *testing.T) {
	shop(t)
	ctx := open(t, base+"/workloads/ns/shop/web-deployment", 1280, 900)
	waitJS(t, ctx, "the two selected clusters", `[...document.querySelectorAll('table.decisions tr.selected td:first-child')].map(e => e.textContent).join() === 'member1,member2'`)
	waitJS(t, ctx, "the timeline", `document.querySelector('ol.timeline').innerText.includes('Scheduled')`)
	submit(t, ctx, `a[href="?explain=all"]`)
	waitJS(t, ctx, "member3 filtered out with its reason", `(() => {
		const row = [...document.querySelectorAll('table.decisions tbody tr')].find(r => r.cells[0].textContent === 'member3');
		return row !== undefined && row.classList.contains('filtered') && row.cells[5].textContent !== '' && row.cells[6].textContent !== '';
	})()`)
}

// Filters and search narrow the workloads page.
func TestWorkloadsSearch(t *testing.T) {
	shop(t)
	ctx := open(t, base+"/workloads", 1280, 900)
	waitJS(t, ctx, "both shop workloads", `document.querySelectorAll('tr[data-workload^="shop/"]').length === 2`)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#q"), "secret shop/db")); err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, `form.filters button[type=submit]`)
	waitJS(t, ctx, "only the Secret", `location.search.includes('q=') && document.querySelectorAll('tbody tr[data-workload]').length === 1 && document.querySelector('tr[data-workload="shop/db"]') !== null`)
}

// The what-if page plans a pasted policy on the live fleet, and names the
// field of a bad one.
func TestWhatIf(t *testing.T) {
	shop(t)
	ctx := open(t, base+"/whatif", 1280, 900)
	policy := policyYAML(shopNS, "what-if", "apps/v1", "Deployment", "web", "    clusterAffinity: {clusterNames: [member3]}\n")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#policy"), policy)); err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, `form.whatif button[type=submit]`)
	waitJS(t, ctx, "web placed on member3 alone", `document.querySelector('section.planned h3') !== null &&
		document.querySelector('section.planned h3').textContent.includes('shop/web') &&
		[...document.querySelectorAll('section.planned tr.selected td:first-child')].map(e => e.textContent).join() === 'member3'`)
	shot(t, ctx, "whatif-result")

	bad := strings.Replace(policy, "placement:", "placment:", 1)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#policy"), bad)); err != nil {
		t.Fatal(err)
	}
	submit(t, ctx, `form.whatif button[type=submit]`)
	waitJS(t, ctx, "the error names the field", `document.querySelector('p.error') !== null && document.querySelector('p.error').textContent.includes('placment')`)
}

// No page shows a Secret's content, though the Secret is propagated.
func TestNoSecretContent(t *testing.T) {
	shop(t)
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	for _, path := range []string{"/", "/workloads?namespace=shop", "/workloads/ns/shop/db-secret", "/workloads/ns/shop/db-secret?explain=all", "/failover"} {
		ctx := open(t, base+path, 1280, 900)
		waitJS(t, ctx, "the page", `document.querySelector('main') !== null`)
		doc := html(t, ctx)
		if strings.Contains(doc, secretValue) || strings.Contains(doc, encoded) {
			t.Errorf("%s shows the Secret's value", path)
		}
	}
}

// Keyboard and labels: the first Tab reaches the skip link, which moves
// focus to the content; every form control has a label; every tile of the
// fleet picture is a link with a name.
func TestAccessibility(t *testing.T) {
	shop(t)
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			ctx := open(t, base+p.path, 1280, 900)
			waitJS(t, ctx, p.name+" shows its data", p.ready)
			if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
				t.Fatal(err)
			}
			if got := eval[string](t, ctx, "document.activeElement.className"); got != "skip" {
				t.Errorf("the first Tab focuses %q, want the skip link", got)
			}
			if err := chromedp.Do(ctx, chromedp.KeyEvent("\r")); err != nil {
				t.Fatal(err)
			}
			waitJS(t, ctx, "focus on the content", `document.activeElement.id === 'main'`)
			unlabelled := eval[[]string](t, ctx, `[...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
				.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
				.map(e => e.outerHTML.slice(0, 80))`)
			if len(unlabelled) > 0 {
				t.Errorf("controls without a label: %v", unlabelled)
			}
			nameless := eval[float64](t, ctx, `[...document.querySelectorAll('svg.fleet a')].filter(a => !a.getAttribute('aria-label')).length`)
			if nameless > 0 {
				t.Errorf("%v fleet tiles without a name", nameless)
			}
			if lang := eval[string](t, ctx, "document.documentElement.lang"); lang != "en" {
				t.Errorf("lang %q", lang)
			}
		})
	}
}
