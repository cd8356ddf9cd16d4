package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// BenchmarkRender renders each page of a 1,000-cluster, 10,000-workload
// fleet on the server (the browser's part is test/browserbench), and the
// snapshot scan alone as the floor every page pays.
func BenchmarkRender(b *testing.B) {
	snap := dashboardtest.Fleet(1000, 10000)
	srv, err := dashboard.New(dashboard.Options{Hub: &rest.Config{Host: "https://127.0.0.1:1"}, Source: &dashboardtest.Source{Snap: snap}, Logger: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor-rows", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, bd := range snap.Bindings {
				_ = dashboard.Row(interpreter.Builtin(), bd)
			}
		}
	})
	for _, p := range []struct{ name, path string }{
		{"fleet", "/"}, {"workloads", "/workloads"}, {"workloads-search", "/workloads?q=app-0999"},
		{"workload", "/workloads/ns/team-00/app-00000-deployment"}, {"failover", "/failover"},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, p.path, nil)
				req.Host = "127.0.0.1" // on loopback, only this machine's names are served
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", p.path, rec.Code)
				}
				b.SetBytes(int64(rec.Body.Len()))
			}
		})
	}
}
