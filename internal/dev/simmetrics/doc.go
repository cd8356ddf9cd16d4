// Package simmetrics serves metrics.k8s.io/v1beta1 (PodMetrics and
// NodeMetrics, as metrics-server does) and custom.metrics.k8s.io/v1beta2
// (Pods and Object metrics, as a metrics adapter does) for a simulated
// member cluster, from simulated usage: simulated members have no kubelets
// to measure and no applications to count requests of.
//
// # How clients reach it
//
// Through the member's API server, like metrics-server on a real cluster:
// GET /apis/metrics.k8s.io/v1beta1/namespaces/NS/pods on the member (the
// k8s.io/metrics clientset, `kubectl top`, `kubectl get --raw`). Start
// serves HTTPS on a free loopback port in this process and registers it
// with the member's API server as an aggregated API: the APIServices
// v1beta1.metrics.k8s.io and v1beta2.custom.metrics.k8s.io, pointing at
// the kube-system Service
// shepherd-sim-metrics, an ExternalName Service for localhost with the
// server's port. The aggregator dials an ExternalName Service's name
// itself, so no kube-proxy is needed. The server only answers requests
// that come with the aggregator's front-proxy client certificate (the CA
// and name it reads from kube-system/extension-apiserver-authentication);
// the member's API server has authenticated and authorized the user
// before proxying.
//
// # Simulated usage: the knob
//
// A pod that runs and is Ready uses, per container, its request times a
// percent: CPU request × cpu percent, memory request × memory percent. A
// pending, unready or finished pod has no metrics, as a kubelet would
// report none. The percents come from, first match wins:
//
//  1. the member's ConfigMap kube-system/shepherd-sim-usage, keys
//     cpu-utilization and memory-utilization, each a YAML map of
//     "NAMESPACE/WORKLOAD" (a Deployment, StatefulSet, Job, DaemonSet or
//     bare pod's name) to a percent; read on every request, so a test
//     changes load at once without a rollout;
//  2. the pod's annotations sim.shepherd.io/cpu-utilization and
//     sim.shepherd.io/memory-utilization, e.g. "90"; put on a workload's
//     pod template, every pod of the workload has them (changing the
//     template rolls the workload out);
//  3. the defaults, DefaultCPUPercent (10) and DefaultMemoryPercent (50).
//
// A percent is a number from 0 to MaxPercent (1000). A value that is not
// is ignored for the next source: it is logged once and told in a Warning
// Event (reason InvalidSimulatedUsage) on the pod or the ConfigMap.
//
// NodeMetrics sum the pods on each node. Timestamps are the time of the
// request (to the second) and the window is 15 s, as metrics-server's
// default resolution.
//
// # Simulated custom metrics: the knob
//
// A custom metric has the value its knob gives, and no value without one
// (the API answers NotFound, as an adapter does for a metric it has no
// series of):
//
//   - a Pods metric NAME of a pod that runs and is Ready: the override
//     ConfigMap's key pods-metrics, a YAML map of "NAMESPACE/WORKLOAD" to
//     a map of metric name to value, else the pod's annotation
//     metric.sim.shepherd.io/NAME (on a workload's pod template, every
//     pod of it has it);
//   - an Object metric NAME of an object of a namespace: the ConfigMap's
//     key object-metrics, a YAML map of "NAMESPACE/RESOURCE/NAME"
//     (RESOURCE as the API's path has it: services,
//     ingresses.networking.k8s.io) to a map of metric name to value, else
//     the object's annotation metric.sim.shepherd.io/NAME.
//
// A value is a quantity from 0 to MaxMetricValue ("20", "1500m", "2k");
// one that is not is ignored (no value), logged once and told in a
// Warning Event as a percent is. Simulated values carry no labels: a
// metricLabelSelector that parses selects them all. Discovery lists the
// metrics of pods' annotations and of the ConfigMap, collected at most
// every 10 s (as a metrics adapter relists its series): a new metric's
// value is served at once, its name may take that long to be listed.
package simmetrics
