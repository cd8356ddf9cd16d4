// Package browserbench measures the dashboard's first render in headless
// Chromium for a fleet of 1,000 clusters and 10,000 workloads, each page
// against its floor: the same document, already rendered, served from
// memory by the same server (so the ratio is what rendering from the
// fleet costs on top of moving and drawing the bytes).
//
//	go test ./test/browserbench -run '^$' -bench . -benchtime 5x
//
// With SHEPHERD_SCREENSHOTS=DIR it saves the fleet page as DIR/fleet-1000.png.
package browserbench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
	"github.com/shepherd-io/shepherd/test/browserenv"
)

var browser context.Context

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b, stop, err := browserenv.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		cancel()
		os.Exit(1)
	}
	browser = b
	code := m.Run()
	stop()
	cancel()
	os.Exit(code)
}

// fleetServer serves the dashboard over a synthetic fleet, and under
// /floor/ the pages it rendered once, from memory.
func fleetServer(b *testing.B, clusters, workloads int, paths []string) string {
	b.Helper()
	snap := dashboardtest.Fleet(clusters, workloads)
	srv, err := dashboard.New(dashboard.Options{Hub: &rest.Config{Host: "https://127.0.0.1:1"}, Source: &dashboardtest.Source{Snap: snap}, Logger: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	floors := map[string][]byte{}
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	mux.HandleFunc("/floor/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(floors[strings.TrimPrefix(r.URL.RequestURI(), "/floor")])
	})
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	addr, _, err := dashboard.Serve(ctx, "127.0.0.1:0", mux, "", "")
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + addr.String()
	for _, p := range paths {
		resp, err := http.Get(base + p)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", p, resp.StatusCode)
		}
		floors[p] = body
	}
	return base
}

// loadMillis navigates a fresh tab to url and returns the time from the
// start of the navigation to the end of the load event: the document is
// parsed, styled, laid out and its script ran.
func loadMillis(b *testing.B, url string) float64 {
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url)); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(() => {
			const n = performance.getEntriesByType('navigation')[0];
			return n ? n.loadEventEnd : 0;
		})()`))
		if err == nil && v > 0 {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("%s did not load within a minute", url)
	return 0
}

// BenchmarkFirstRender loads each page of a 1,000-cluster, 10,000-workload
// fleet and its floor in turn, and reports the page's load time and its
// ratio to the floor's.
func BenchmarkFirstRender(b *testing.B) {
	pages := []struct{ name, path string }{
		{"fleet", "/"},
		{"workloads", "/workloads"},
		{"workloads-filtered", "/workloads?cluster=cluster-0001"},
		{"workload", "/workloads/ns/team-00/app-00000-deployment"},
		{"failover", "/failover"},
	}
	var paths []string
	for _, p := range pages {
		paths = append(paths, p.path)
	}
	base := fleetServer(b, 1000, 10000, paths)
	if dir := os.Getenv("SHEPHERD_SCREENSHOTS"); dir != "" {
		ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/")); err != nil {
			b.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()) // the first screen only: the table below holds 1,000 rows
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "fleet-1000.png"), png, 0o644); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			var load, floor float64
			for i := 0; i < b.N; i++ {
				load += loadMillis(b, base+p.path)
				floor += loadMillis(b, base+"/floor"+p.path)
			}
			n := float64(b.N)
			b.ReportMetric(load/n, "ms-load")
			b.ReportMetric(floor/n, "ms-floor-load")
			b.ReportMetric(load/floor, "x-floor")
		})
	}
}
