package simmetrics_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/internal/dev/simmetrics"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/test/testenv"
)

func TestMain(m *testing.M) {
	logging.RedirectKlog(funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, prefix, args)
	}, funcr.Options{Verbosity: 0}).WithName("klog"))
	os.Exit(m.Run())
}

// memberEnv is one simulated member and its clients.
type memberEnv struct {
	t       *testing.T
	m       *simmember.Member
	kube    kubernetes.Interface
	metrics metricsclient.Interface
}

// TestMetricsAPIOnAMember runs a simulated member and reads its
// metrics.k8s.io API the way clients do: through the member's API server.
func TestMetricsAPIOnAMember(t *testing.T) {
	testenv.Heavy(t)
	dir := t.TempDir()
	begin := time.Now()
	m, err := simmember.Start(context.Background(), simmember.Options{
		MemberSpec: simmember.DefaultMemberSpec("metrics"),
		DataDir:    filepath.Join(dir, "metrics"),
		Logger:     funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	t.Logf("TIMING member started in %s", time.Since(begin).Round(time.Millisecond))
	e := &memberEnv{t: t, m: m, kube: kubernetes.NewForConfigOrDie(m.RestConfig()), metrics: metricsclient.NewForConfigOrDie(m.RestConfig())}

	// Available as soon as Start returns.
	e.checkDiscovery()

	e.createNamespace("load")
	e.createDeployment("web", 2, map[string]string{simmetrics.CPUUtilizationAnnotation: "90", simmetrics.MemoryUtilizationAnnotation: "40",
		simmetrics.MetricAnnotationPrefix + "rps": "12"},
		container("app", "200m", "100Mi"), container("side", "100m", "64Mi"))
	e.createDeployment("idle", 1, nil, container("app", "500m", "256Mi"))
	e.createPod("stuck", nil, map[string]string{"no-such": "node"})
	e.createPod("bad", map[string]string{simmetrics.CPUUtilizationAnnotation: "lots", simmetrics.MemoryUtilizationAnnotation: "1001"}, nil)
	e.createPod("neg", map[string]string{simmetrics.CPUUtilizationAnnotation: "-5"}, nil)
	e.waitReady("load", 5)

	t.Run("pods: usage is the request times the knob, through the API server", func(t *testing.T) {
		list := e.rawPodMetrics("/apis/metrics.k8s.io/v1beta1/namespaces/load/pods")
		var names []string
		for _, pm := range list.Items {
			names = append(names, pm.Name)
			if pm.Window.Duration != simmetrics.Window || time.Since(pm.Timestamp.Time) > time.Minute || pm.Timestamp.After(time.Now()) {
				t.Errorf("%s: timestamp %s window %s; want about now and %s", pm.Name, pm.Timestamp, pm.Window.Duration, simmetrics.Window)
			}
			switch {
			case strings.HasPrefix(pm.Name, "web-"):
				checkUsage(t, pm, map[string][2]string{"app": {"180m", "40Mi"}, "side": {"90m", "26843546"}})
			case strings.HasPrefix(pm.Name, "idle-"):
				checkUsage(t, pm, map[string][2]string{"app": {"50m", "128Mi"}})
			case pm.Name == "bad" || pm.Name == "neg":
				checkUsage(t, pm, map[string][2]string{"app": {"10m", "50Mi"}})
			}
		}
		if len(names) != 5 || names[0] != "bad" || !strings.HasPrefix(names[1], "idle-") || names[2] != "neg" ||
			!strings.HasPrefix(names[3], "web-") || !strings.HasPrefix(names[4], "web-") || names[3] >= names[4] {
			t.Errorf("pods %v; want bad, idle-*, neg, web-*, web-* (sorted; stuck, pending, left out)", names)
		}
	})

	t.Run("pods: label selector, all namespaces, get", func(t *testing.T) {
		ctx := context.Background()
		web, err := e.metrics.MetricsV1beta1().PodMetricses("load").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(web.Items) != 2 {
			t.Fatalf("app=web: %v, %v; want the 2 web pods", web, err)
		}
		all, err := e.metrics.MetricsV1beta1().PodMetricses("").List(ctx, metav1.ListOptions{})
		if err != nil || len(all.Items) != 5 {
			t.Fatalf("all namespaces: %d pods, %v; want 5", len(all.Items), err)
		}
		one, err := e.metrics.MetricsV1beta1().PodMetricses("load").Get(ctx, web.Items[0].Name, metav1.GetOptions{})
		if err != nil || one.Name != web.Items[0].Name || len(one.Containers) != 2 {
			t.Errorf("get %s: %v, %v", web.Items[0].Name, one, err)
		}
		if _, err := e.metrics.MetricsV1beta1().PodMetricses("load").Get(ctx, "stuck", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get the pending pod: %v; want NotFound", err)
		}
		if _, err := e.metrics.MetricsV1beta1().PodMetricses("load").List(ctx, metav1.ListOptions{LabelSelector: "app in (("}); !apierrors.IsBadRequest(err) {
			t.Errorf("a broken label selector: %v; want BadRequest", err)
		}
	})

	t.Run("pods: a protobuf client, as kube-controller-manager's", func(t *testing.T) {
		cfg := m.RestConfig()
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
		list, err := metricsclient.NewForConfigOrDie(cfg).MetricsV1beta1().PodMetricses("load").List(context.Background(), metav1.ListOptions{})
		if err != nil || len(list.Items) != 5 {
			t.Fatalf("protobuf list: %v; want 5 pods", err)
		}
	})

	t.Run("custom metrics: Pods and Object metrics from the knob, through the API server", func(t *testing.T) {
		e.checkCustomMetrics()
	})

	t.Run("bad knob values: the default, and a Warning Event", func(t *testing.T) {
		for pod, want := range map[string][]string{
			"bad": {`"lots" is not a number`, `"1001" is above 1000`, "using the default"},
			"neg": {`"-5" is negative`, "using the default 10"},
		} {
			e.waitEvent("load", "Pod", pod, want)
		}
	})

	t.Run("nodes: the sum of their pods", func(t *testing.T) {
		e.checkNodes()
	})

	t.Run("changing the knob changes the usage", func(t *testing.T) {
		ctx := context.Background()
		// On a pod: at once.
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"75"}}}`, simmetrics.CPUUtilizationAnnotation)
		if _, err := e.kube.CoreV1().Pods("load").Patch(ctx, "neg", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitUsage("neg", "app", "75m")
		// In the override ConfigMap: at once, for every pod of the workload.
		e.setOverrides(map[string]string{simmetrics.OverrideCPUKey: "load/idle: 300\nload/web: \"20\""})
		e.waitUsage("idle-", "app", "1500m")
		e.waitUsage("web-", "app", "40m")
		e.setOverrides(map[string]string{simmetrics.OverrideCPUKey: "load/idle: 30"})
		e.waitUsage("idle-", "app", "150m")
		e.waitUsage("web-", "app", "180m")
		// A bad entry: ignored (the annotation or default applies) and told.
		e.setOverrides(map[string]string{simmetrics.OverrideCPUKey: "load/idle: lots"})
		e.waitUsage("idle-", "app", "50m")
		e.waitEvent(metav1.NamespaceSystem, "ConfigMap", simmetrics.OverrideConfigMap, []string{`entry "load/idle": "lots" is not a number`})
		// On the Deployment's pod template: the new pods have it.
		patch = fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:"30"}}}}}`, simmetrics.CPUUtilizationAnnotation)
		if _, err := e.kube.AppsV1().Deployments("load").Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitUsage("web-", "app", "60m")
	})

	t.Run("the member's RBAC decides who reads metrics", func(t *testing.T) {
		e.checkRBAC()
	})

	t.Run("only the member's aggregator is served", func(t *testing.T) {
		e.checkDirectAccessRefused()
	})

	t.Run("a control-plane restart", func(t *testing.T) {
		begin := time.Now()
		if err := m.RestartControlPlane(300 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		e.kube = kubernetes.NewForConfigOrDie(m.RestConfig())
		e.metrics = metricsclient.NewForConfigOrDie(m.RestConfig())
		e.waitUsage("idle-", "app", "50m")
		t.Logf("TIMING metrics served again %s after the control plane's restart began", time.Since(begin).Round(time.Millisecond))
	})

	port := e.serverPort()
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
		conn.Close()
		t.Errorf("the metrics server still listens on %d after the member stopped", port)
	}

	// Started again on its data dir, the member registers its new server
	// (new port, new certificate) over the stored APIService.
	begin = time.Now()
	m, err = simmember.Start(context.Background(), simmember.Options{
		MemberSpec: simmember.DefaultMemberSpec("metrics"),
		DataDir:    filepath.Join(dir, "metrics"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	t.Logf("TIMING member started again in %s", time.Since(begin).Round(time.Millisecond))
	e = &memberEnv{t: t, m: m, kube: kubernetes.NewForConfigOrDie(m.RestConfig()), metrics: metricsclient.NewForConfigOrDie(m.RestConfig())}
	if p := e.serverPort(); p == port {
		t.Errorf("the APIService still names the stopped server's port %d", port)
	}
	e.waitUsage("idle-", "app", "50m")
}
