package scenario

import (
	"reflect"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
)

const objectsYAML = `
apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: member-1, labels: {env: prod}}
spec: {apiEndpoint: "https://m1:6443", provider: aws, region: eu, zone: eu-a}
status:
  conditions: [{type: Ready, status: "True", reason: Probed, message: ok, lastTransitionTime: "2026-01-01T00:00:00Z"}]
  apiEnablements: [{groupVersion: apps/v1, resources: [{name: deployments, kind: Deployment}]}]
  resourceSummary:
    allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
    allocated: {cpu: "2", memory: 4Gi, pods: "10"}
---
apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: member-2}
spec: {apiEndpoint: "https://m2:6443"}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: everything}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {replicaScheduling: {replicaSchedulingType: Duplicated}}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: by-label, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  priority: 5
  placement: {replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: by-name, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member-1]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 3
  template:
    spec:
      initContainers: [{name: init, image: x, resources: {requests: {cpu: "2"}}}]
      containers:
      - {name: a, image: x, resources: {requests: {cpu: 500m, memory: 256Mi}}}
      - {name: b, image: x, resources: {requests: {cpu: 250m, memory: 256Mi, nvidia.com/gpu: "1"}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop, labels: {app: web}}
spec:
  template: {spec: {containers: [{name: a, image: x}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other, namespace: ops}
spec: {replicas: 2, template: {spec: {containers: [{name: a, image: x}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: job, namespace: ops}
spec: {parallelism: 4, template: {spec: {containers: [{name: a, image: x}]}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ops}
data: {a: b}
---
apiVersion: work.shepherd.io/v1alpha1
kind: ResourceBinding
metadata: {name: legacy-deployment, namespace: ops}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: ops, name: legacy, uid: legacy-uid}
  replicas: 2
  clusters: [{name: member-1, replicas: 2}]
  rescheduleTriggeredAt: "2026-01-01T00:00:00Z"
  placement: {replicaScheduling: {replicaSchedulingType: Divided}}
`

func TestObjects(t *testing.T) {
	s := parse(t, objectsYAML)
	if s.Snapshot.Len() != 2 {
		t.Fatalf("%d clusters", s.Snapshot.Len())
	}
	m1 := s.Snapshot.At(0)
	if m1.Available.MilliCPU != 6000 || m1.Available.Memory != 12<<30 || m1.Available.Pods != 100 || m1.Region != "eu" ||
		m1.Labels["env"] != "prod" || !m1.Probed || m1.Ready != "True" || !reflect.DeepEqual(m1.APIs, []string{"apps/v1/Deployment"}) {
		t.Errorf("member-1: %+v", m1)
	}
	if m2 := s.Snapshot.At(1); m2.Probed || len(m2.APIs) != 0 {
		t.Errorf("member-2 has no status: it is not probed: %+v", m2)
	}
	if !reflect.DeepEqual(s.Unmatched, []string{"Job ops/job", "ConfigMap ops/cm"}) {
		t.Errorf("unmatched: %v", s.Unmatched)
	}
	byName := map[string]int{}
	for i, w := range s.Workloads {
		byName[w.Name] = i
	}
	web := s.Workloads[byName["web"]]
	// A PropagationPolicy naming the template wins over a label selector
	// with a higher priority, which wins over a ClusterPropagationPolicy.
	if web.Placement.ClusterAffinity == nil || web.Placement.ClusterAffinity.ClusterNames[0] != "member-1" {
		t.Errorf("web placed by the wrong policy: %+v", web.Placement)
	}
	// Effective request: max(sum of containers, largest init container).
	if web.Replicas != 3 || web.Request.MilliCPU != 2000 || web.Request.Memory != 512<<20 || len(web.Request.Scalars) != 1 {
		t.Errorf("web: replicas %d request %+v", web.Replicas, web.Request)
	}
	if api := s.Workloads[byName["api"]]; api.Replicas != 1 || api.Placement.ReplicaScheduling.ReplicaDivisionPreference != "Aggregated" || !api.Request.IsZero() {
		t.Errorf("api: %+v", api)
	}
	if other := s.Workloads[byName["other"]]; other.Replicas != 2 || other.Placement.ReplicaScheduling.ReplicaSchedulingType != "Duplicated" {
		t.Errorf("other: %+v", other)
	}
	legacy := s.Workloads[byName["legacy"]]
	if legacy.Mode != core.Fresh || len(legacy.Previous) != 1 || legacy.Namespace != "ops" || legacy.Now != now {
		t.Errorf("legacy: %+v", legacy)
	}
}
