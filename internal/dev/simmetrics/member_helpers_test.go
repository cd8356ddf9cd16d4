package simmetrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/internal/dev/simmetrics"
	"github.com/shepherd-io/shepherd/test/testenv"
)

func container(name, cpu, memory string) corev1.Container {
	return corev1.Container{
		Name: name, Image: "registry.k8s.io/pause:3.10",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}},
	}
}

func (e *memberEnv) createNamespace(name string) {
	e.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *memberEnv) createDeployment(name string, replicas int32, annotations map[string]string, containers ...corev1.Container) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "load"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec:       corev1.PodSpec{Containers: containers},
			},
		},
	}
	if _, err := e.kube.AppsV1().Deployments("load").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *memberEnv) createPod(name string, annotations, nodeSelector map[string]string) {
	e.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "load", Annotations: annotations, Labels: map[string]string{"app": "bare"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container("app", "100m", "100Mi")}, NodeSelector: nodeSelector},
	}
	if _, err := e.kube.CoreV1().Pods("load").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// waitReady waits until n pods in namespace run Ready (and are the only
// ones that run).
func (e *memberEnv) waitReady(namespace string, n int) {
	e.t.Helper()
	waitFor(e.t, 90*time.Second, func() (bool, string) {
		pods, err := e.kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for i := range pods.Items {
			if simmetrics.Reporting(&pods.Items[i]) {
				ready++
			}
		}
		return ready == n, fmt.Sprintf("%d of %d pods ready", ready, len(pods.Items))
	})
}

// rawPodMetrics is `kubectl get --raw path`.
func (e *memberEnv) rawPodMetrics(path string) *metricsv1beta1.PodMetricsList {
	e.t.Helper()
	raw, err := e.kube.Discovery().RESTClient().Get().AbsPath(path).DoRaw(context.Background())
	if err != nil {
		e.t.Fatalf("GET %s: %v: %s", path, err, raw)
	}
	list := &metricsv1beta1.PodMetricsList{}
	if err := json.Unmarshal(raw, list); err != nil {
		e.t.Fatalf("GET %s: %v: %s", path, err, raw)
	}
	if list.Kind != "PodMetricsList" || list.APIVersion != "metrics.k8s.io/v1beta1" {
		e.t.Errorf("GET %s: kind %q apiVersion %q", path, list.Kind, list.APIVersion)
	}
	return list
}

// checkUsage compares each container's cpu and memory usage with want.
func checkUsage(t *testing.T, pm metricsv1beta1.PodMetrics, want map[string][2]string) {
	t.Helper()
	if len(pm.Containers) != len(want) {
		t.Errorf("%s: %d containers, want %d", pm.Name, len(pm.Containers), len(want))
	}
	for _, c := range pm.Containers {
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("%s: unexpected container %s", pm.Name, c.Name)
			continue
		}
		cpu, mem := c.Usage[corev1.ResourceCPU], c.Usage[corev1.ResourceMemory]
		if cpu.Cmp(resource.MustParse(w[0])) != 0 || mem.Cmp(resource.MustParse(w[1])) != 0 {
			t.Errorf("%s/%s: cpu %s memory %s; want %s %s", pm.Name, c.Name, cpu.String(), mem.String(), w[0], w[1])
		}
	}
}

// waitUsage waits until every pod whose name starts with prefix (in
// namespace load) reports cpu for container.
func (e *memberEnv) waitUsage(prefix, container, cpu string) {
	e.t.Helper()
	want := resource.MustParse(cpu)
	waitFor(e.t, 90*time.Second, func() (bool, string) {
		list, err := e.metrics.MetricsV1beta1().PodMetricses("load").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		ok := true
		for _, pm := range list.Items {
			if !strings.HasPrefix(pm.Name, prefix) {
				continue
			}
			for _, c := range pm.Containers {
				if c.Name == container {
					q := c.Usage[corev1.ResourceCPU]
					seen = append(seen, pm.Name+"="+q.String())
					ok = ok && q.Cmp(want) == 0
				}
			}
		}
		return ok && len(seen) > 0, fmt.Sprintf("cpu of %s* %s: %v, want %s", prefix, container, seen, cpu)
	})
}

func (e *memberEnv) setOverrides(data map[string]string) {
	e.t.Helper()
	ctx := context.Background()
	cms := e.kube.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	cm, err := cms.Get(ctx, simmetrics.OverrideConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: simmetrics.OverrideConfigMap, Namespace: metav1.NamespaceSystem}, Data: data}
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	} else if err == nil {
		cm.Data = data
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

// waitEvent waits for a Warning Event about ignored knob values on the
// object whose message contains every one of want.
func (e *memberEnv) waitEvent(namespace, kind, name string, want []string) {
	e.t.Helper()
	waitFor(e.t, 30*time.Second, func() (bool, string) {
		events, err := e.kube.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var msgs []string
		for _, ev := range events.Items {
			if ev.Reason != simmetrics.EventReason || ev.InvolvedObject.Kind != kind || ev.InvolvedObject.Name != name {
				continue
			}
			msgs = append(msgs, ev.Message)
			all := ev.Type == corev1.EventTypeWarning
			for _, w := range want {
				all = all && strings.Contains(ev.Message, w)
			}
			if all {
				return true, ""
			}
		}
		return false, fmt.Sprintf("events on %s %s/%s: %q; want one with %q", kind, namespace, name, msgs, want)
	})
}

func (e *memberEnv) checkDiscovery() {
	e.t.Helper()
	res, err := e.kube.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1")
	if err != nil {
		e.t.Fatalf("discovery of metrics.k8s.io/v1beta1: %v", err)
	}
	kinds := map[string]string{}
	for _, r := range res.APIResources {
		kinds[r.Name] = r.Kind
	}
	if kinds["pods"] != "PodMetrics" || kinds["nodes"] != "NodeMetrics" {
		e.t.Errorf("metrics.k8s.io/v1beta1 resources %v; want pods (PodMetrics) and nodes (NodeMetrics)", kinds)
	}
	// All groups at once, as the namespace and garbage-collector
	// controllers discover: the aggregated document is fresh too.
	if _, _, err := e.kube.Discovery().ServerGroupsAndResources(); err != nil {
		e.t.Errorf("discovery of every group right after start: %v", err)
	}
}

func (e *memberEnv) checkNodes() {
	e.t.Helper()
	ctx := context.Background()
	pods, err := e.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	pms, err := e.metrics.MetricsV1beta1().PodMetricses("").List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	node := map[string]string{}
	for _, p := range pods.Items {
		node[p.Name] = p.Spec.NodeName
	}
	want := map[string]*resource.Quantity{}
	for _, pm := range pms.Items {
		n := node[pm.Name]
		if want[n] == nil {
			want[n] = resource.NewMilliQuantity(0, resource.DecimalSI)
		}
		for _, c := range pm.Containers {
			want[n].Add(c.Usage[corev1.ResourceCPU])
		}
	}
	nodes, err := e.metrics.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(nodes.Items) != simmember.DefaultMemberSpec("metrics").Nodes {
		e.t.Errorf("%d nodes, want %d", len(nodes.Items), simmember.DefaultMemberSpec("metrics").Nodes)
	}
	for _, n := range nodes.Items {
		got, w := n.Usage[corev1.ResourceCPU], resource.MustParse("0")
		if want[n.Name] != nil {
			w = *want[n.Name]
		}
		if got.Cmp(w) != 0 {
			e.t.Errorf("node %s: cpu %s, want %s (the sum of its pods)", n.Name, got.String(), w.String())
		}
	}
	one, err := e.metrics.MetricsV1beta1().NodeMetricses().Get(ctx, nodes.Items[0].Name, metav1.GetOptions{})
	if err != nil || one.Name != nodes.Items[0].Name {
		e.t.Errorf("get node %s: %v, %v", nodes.Items[0].Name, one, err)
	}
	if _, err := e.metrics.MetricsV1beta1().NodeMetricses().Get(ctx, "no-such-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		e.t.Errorf("get a missing node: %v; want NotFound", err)
	}
}

// serverPort is the metrics server's port, from its APIService.
func (e *memberEnv) serverPort() int {
	e.t.Helper()
	agg := aggregator.NewForConfigOrDie(e.m.RestConfig())
	api, err := agg.ApiregistrationV1().APIServices().Get(context.Background(), simmetrics.APIServiceName, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return int(*api.Spec.Service.Port)
}

// checkDirectAccessRefused asks the metrics server itself: without a
// client certificate it answers 401, and the member's admin certificate
// (not the aggregator's) fails the TLS handshake.
func (e *memberEnv) checkDirectAccessRefused() {
	e.t.Helper()
	url := fmt.Sprintf("https://127.0.0.1:%d/apis/metrics.k8s.io/v1beta1/pods", e.serverPort())
	get := func(cert bool) (int, error) {
		tlsCfg, err := rest.TLSConfigFor(e.m.RestConfig())
		if err != nil {
			e.t.Fatal(err)
		}
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // the server's certificate is not what is tested
		tlsCfg.RootCAs = nil
		if !cert {
			tlsCfg.GetClientCertificate = nil
			tlsCfg.Certificates = nil
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 5 * time.Second}
		resp, err := client.Get(url)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := get(false); err != nil || code != http.StatusUnauthorized {
		e.t.Errorf("GET %s without a client certificate: %d, %v; want 401", url, code, err)
	}
	if code, err := get(true); err == nil || !strings.Contains(err.Error(), "unknown certificate authority") {
		e.t.Errorf("GET %s with the admin certificate: %d, %v; want the handshake refused", url, code, err)
	}
}

// waitFor polls cond until it holds, failing the test with cond's last
// description after timeout.
func waitFor(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, desc := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %s", timeout, desc)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkRBAC reads PodMetrics and a Pods metric as a ServiceAccount:
// forbidden until a Role grants pods.metrics.k8s.io and pods/rps of
// custom.metrics.k8s.io, as on a cluster with metrics-server and a
// metrics adapter.
func (e *memberEnv) checkRBAC() {
	e.t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "load"}}
	if _, err := e.kube.CoreV1().ServiceAccounts("load").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	tok, err := e.kube.CoreV1().ServiceAccounts("load").CreateToken(ctx, "reader", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(e.m.RestConfig())
	cfg.BearerToken = tok.Status.Token
	reader := metricsclient.NewForConfigOrDie(cfg).MetricsV1beta1().PodMetricses("load")
	if _, err := reader.List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		e.t.Fatalf("listing PodMetrics without a role: %v; want Forbidden", err)
	}
	custom := func() error {
		return cfgClient(cfg).Get().AbsPath("/apis/custom.metrics.k8s.io/v1beta2/namespaces/load/pods/*/rps").Do(ctx).Error()
	}
	if err := custom(); !apierrors.IsForbidden(err) {
		e.t.Fatalf("reading a Pods metric without a role: %v; want Forbidden", err)
	}
	// The least a reader of a Pods metric needs: get on pods/METRIC of
	// custom.metrics.k8s.io.
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader", Namespace: "load"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"custom.metrics.k8s.io"}, Resources: []string{"pods/rps"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader", Namespace: "load"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: "load"}},
	}
	if _, err := e.kube.RbacV1().Roles("load").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.kube.RbacV1().RoleBindings("load").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	waitFor(e.t, 30*time.Second, func() (bool, string) {
		list, err := reader.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		if err := custom(); err != nil {
			return false, "pods/rps: " + err.Error()
		}
		return len(list.Items) == 5, fmt.Sprintf("%d pods", len(list.Items))
	})
}

// cfgClient is a REST client of cfg for raw requests.
func cfgClient(cfg *rest.Config) rest.Interface {
	return kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient()
}

// checkCustomMetrics reads custom.metrics.k8s.io/v1beta2 as a
// HorizontalPodAutoscaler does, through the member's API server: the web
// pods' rps from their template's annotation, a Service's value from its
// own, NotFound for a metric nothing has.
func (e *memberEnv) checkCustomMetrics() {
	e.t.Helper()
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "load", Annotations: map[string]string{simmetrics.MetricAnnotationPrefix + "requests": "2k"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := e.kube.CoreV1().Services("load").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	get := func(path, selector string) (*custommetricsv1beta2.MetricValueList, error) {
		r := e.kube.Discovery().RESTClient().Get().AbsPath(path)
		if selector != "" {
			r = r.Param("labelSelector", selector)
		}
		raw, err := r.DoRaw(ctx)
		if err != nil {
			return nil, err
		}
		list := &custommetricsv1beta2.MetricValueList{}
		return list, json.Unmarshal(raw, list)
	}
	pods, err := get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/load/pods/*/rps", "app=web")
	if err != nil || len(pods.Items) != 2 {
		e.t.Fatalf("the web pods' rps: %v, %v; want two values", pods, err)
	}
	for _, v := range pods.Items {
		if v.Value.Cmp(resource.MustParse("12")) != 0 || v.DescribedObject.Kind != "Pod" || !strings.HasPrefix(v.DescribedObject.Name, "web-") {
			e.t.Errorf("value %+v; want 12 of a web pod", v)
		}
	}
	obj, err := get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/load/services/web/requests", "")
	if err != nil || len(obj.Items) != 1 || obj.Items[0].Value.Cmp(resource.MustParse("2k")) != 0 || obj.Items[0].DescribedObject.Kind != "Service" {
		e.t.Fatalf("the Service's requests: %+v, %v; want 2k", obj, err)
	}
	if _, err := get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/load/pods/*/latency", ""); !apierrors.IsNotFound(err) {
		e.t.Errorf("a metric no pod has: %v; want NotFound", err)
	}
	// Discovery lists the metric within the relist period (10 s) of the
	// pods getting it; the values above were served at once.
	testenv.Eventually(e.t, 30*time.Second, "pods/rps in custom.metrics.k8s.io/v1beta2 discovery", func() error {
		res, err := e.kube.Discovery().ServerResourcesForGroupVersion("custom.metrics.k8s.io/v1beta2")
		if err != nil || len(res.APIResources) == 0 || res.APIResources[0].Name != "pods/rps" {
			return fmt.Errorf("discovery: %+v, %v", res, err)
		}
		return nil
	})
}
