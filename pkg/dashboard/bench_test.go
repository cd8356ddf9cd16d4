package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
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
		b.Run(p.name, func(b *testing.B) { benchGet(b, srv, p.path) })
	}
}

// BenchmarkAutoscalers renders the Autoscalers page of the same fleet with
// 1,000 FederatedHPAs, each with an hour of rescales every 15 s (240
// events, what the hub keeps by default) and a CronFederatedHPA with a
// month of daily runs: the page reads every event of the hub once.
func BenchmarkAutoscalers(b *testing.B) {
	snap := dashboardtest.Fleet(1000, 10000)
	for i := range 1000 {
		ns, name := fmt.Sprintf("team-%02d", i%20), fmt.Sprintf("app-%05d", i)
		snap.FederatedHPAs = append(snap.FederatedHPAs, fhpa(ns, name, name, 1, 100, 10, 10))
		for j := range 240 {
			e := rescale(ns, name, int32(j%50+1), int32((j+1)%50+1), 0)
			e.EventTime = metav1.NewMicroTime(dashboardtest.Epoch.Add(time.Duration(j-240) * 15 * time.Second))
			snap.Events = append(snap.Events, e)
		}
		var runs []any
		for d := range 32 {
			runs = append(runs, autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: mt(-d * 1440), ExecutionTime: mt(-d * 1440), AppliedMaxReplicas: ptr.To[int32](20)})
		}
		snap.CronFederatedHPAs = append(snap.CronFederatedHPAs, cron(ns, name+"-nights", "autoscaling.shepherd.io/v1alpha1", "FederatedHPA", name, runs...))
	}
	srv, err := dashboard.New(dashboard.Options{Hub: &rest.Config{Host: "https://127.0.0.1:1"}, Source: &dashboardtest.Source{Snap: snap}, Logger: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("model", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if v := dashboard.BuildAutoscalers(snap, 1); len(v.Rows) != dashboard.PageSize || len(v.Rows[0].History) != 240+32 {
				b.Fatalf("%d rows, %d entries", len(v.Rows), len(v.Rows[0].History))
			}
		}
	})
	for _, p := range []struct{ name, path string }{{"list", "/autoscalers"}, {"one", "/autoscalers/team-00/app-00000"}} {
		b.Run(p.name, func(b *testing.B) { benchGet(b, srv, p.path) })
	}
}

// benchGet serves GET path b.N times on loopback, each answered 200, and
// reports the page's size as bytes per operation.
func benchGet(b *testing.B, srv http.Handler, path string) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "127.0.0.1" // on loopback, only this machine's names are served
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d", path, rec.Code)
		}
		b.SetBytes(int64(rec.Body.Len()))
	}
}
