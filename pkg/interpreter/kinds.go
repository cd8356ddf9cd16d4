package interpreter

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kind is what Shepherd knows of one built-in kind. A zero field means the
// operation does not apply to it.
type kind struct {
	// replicas is the field holding the replica count; nil for a kind that
	// always runs one replica (a Pod) or has none.
	replicas []string
	// podSpec is the field holding the pod spec one replica runs.
	podSpec []string
	// job: replicas are a Job's parallelism, capped by its completions,
	// and a divided Job gets its share of the completions too.
	job bool
	// summed are the integer status fields that add up over members.
	summed []string
	// observesGeneration: the status carries observedGeneration.
	observesGeneration bool
	// replicasFn, when set, reads the replicas instead of the replicas
	// field (a customization's expression).
	replicasFn func(*unstructured.Unstructured) (int64, error)
	// dependenciesFn, when set, lists the dependencies instead of the pod
	// spec (a customization's expression).
	dependenciesFn func(*unstructured.Unstructured) ([]Dependency, error)
	// retain are fields whose member values every apply keeps.
	retain [][]string
	// health judges a member's copy; nil: no built-in rule.
	health func(*unstructured.Unstructured) HealthResult
	// pod: the kind is one pod, one replica.
	pod bool
	// names the CLI accepts for the kind (singular, plural, short).
	names []string
	// apiVersion the CLI uses for the kind, and the version its health
	// rule reads.
	apiVersion string
	// prune removes the values the hub allocated (see Prune).
	prune func(*unstructured.Unstructured)
	// ready is the status field counting ready replicas, when not
	// readyReplicas.
	ready string
	// statusReplicas is the status field counting the replicas a member
	// runs, when not replicas.
	statusReplicas string
	// sensitive: the kind's values are secret (see Sensitive).
	sensitive bool
	// components lists the pod templates of a kind made of several (see
	// Components); nil: the kind is placed as one object.
	components componentsFunc
	// definesAPI: an object of the kind defines an API, and removing it
	// from a member removes every object of that API there (see
	// DefinesAPI).
	definesAPI bool
	// pods finds the pods an object of the kind runs (see PodSelector);
	// nil: they are not counted.
	pods *podsRule
	// podComponent names the component a pod of the kind runs (see
	// PodComponents); nil: its pods are counted together only.
	podComponent componentLabels
}

var (
	podTemplate  = []string{"spec", "template", "spec"}
	specReplicas = []string{"spec", "replicas"}
	// bySelector: the pods are those of the object's spec.selector.
	bySelector = &podsRule{selector: []string{"spec", "selector"}}
)

// builtin are the built-in kinds, by group and kind: every served version
// keeps its fields in the same places. The kinds made of several pod
// templates are componentKinds' (components.go), added by withComponents.
var builtin = withComponents(map[schema.GroupKind]*kind{
	{Group: "apps", Kind: "Deployment"}: {replicas: specReplicas, podSpec: podTemplate, pods: bySelector, observesGeneration: true, health: typed(deploymentHealth),
		summed:     []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"},
		apiVersion: "apps/v1", names: []string{"deployment", "deployments", "deploy"}},
	{Group: "apps", Kind: "StatefulSet"}: {replicas: specReplicas, podSpec: podTemplate, pods: bySelector, observesGeneration: true, health: typed(statefulSetHealth),
		summed:     []string{"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"},
		apiVersion: "apps/v1", names: []string{"statefulset", "statefulsets", "sts"}},
	{Group: "apps", Kind: "ReplicaSet"}: {replicas: specReplicas, podSpec: podTemplate, pods: bySelector, observesGeneration: true, health: typed(replicaSetHealth),
		summed:     []string{"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"},
		apiVersion: "apps/v1", names: []string{"replicaset", "replicasets", "rs"}},
	{Group: "apps", Kind: "DaemonSet"}: {podSpec: podTemplate, observesGeneration: true, health: typed(daemonSetHealth),
		summed: []string{"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
			"numberReady", "updatedNumberScheduled", "numberAvailable", "numberUnavailable"},
		apiVersion: "apps/v1", names: []string{"daemonset", "daemonsets", "ds"}},
	{Group: "batch", Kind: "Job"}: {replicas: []string{"spec", "parallelism"}, podSpec: podTemplate, job: true, health: typed(jobHealth), prune: pruneJob,
		summed:     []string{"active", "succeeded", "failed", "ready", "terminating"},
		apiVersion: "batch/v1", names: []string{"job", "jobs"}},
	{Group: "batch", Kind: "CronJob"}: {podSpec: []string{"spec", "jobTemplate", "spec", "template", "spec"},
		apiVersion: "batch/v1", names: []string{"cronjob", "cronjobs", "cj"}},
	{Kind: "Pod"}:                                 {podSpec: []string{"spec"}, pod: true, health: typed(podHealth), apiVersion: "v1", names: []string{"pod", "pods", "po"}},
	{Kind: "Service"}:                             {health: typed(serviceHealth), prune: pruneService, apiVersion: "v1", names: []string{"service", "services", "svc"}},
	{Kind: "ConfigMap"}:                           {apiVersion: "v1", names: []string{"configmap", "configmaps", "cm"}},
	{Kind: "Secret"}:                              {sensitive: true, apiVersion: "v1", names: []string{"secret", "secrets"}},
	{Kind: "ServiceAccount"}:                      {apiVersion: "v1", names: []string{"serviceaccount", "serviceaccounts", "sa"}},
	{Kind: "PersistentVolumeClaim"}:               {health: typed(pvcHealth), apiVersion: "v1", names: []string{"persistentvolumeclaim", "persistentvolumeclaims", "pvc"}},
	{Group: "networking.k8s.io", Kind: "Ingress"}: {apiVersion: "networking.k8s.io/v1", names: []string{"ingress", "ingresses", "ing"}},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {apiVersion: "autoscaling/v2",
		names: []string{"horizontalpodautoscaler", "horizontalpodautoscalers", "hpa"}},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {definesAPI: true, apiVersion: "apiextensions.k8s.io/v1",
		names: []string{"customresourcedefinition", "customresourcedefinitions", "crd", "crds"}},
	{Group: "policy", Kind: "PodDisruptionBudget"}: {apiVersion: "policy/v1", names: []string{"poddisruptionbudget", "poddisruptionbudgets", "pdb"}},
})

// withComponents adds componentKinds to kinds: each is known by its
// components, checked, and by its pods (PodSelector); every other
// operation treats it as a kind Shepherd does not know (no replicas,
// health Unknown).
func withComponents(kinds map[schema.GroupKind]*kind) map[schema.GroupKind]*kind {
	for gk, c := range componentKinds {
		if _, dup := kinds[gk]; dup {
			panic(fmt.Sprintf("interpreter: %v is both a built-in kind and a kind of components", gk))
		}
		kinds[gk] = &kind{apiVersion: c.apiVersion, components: checked(fmt.Sprintf("the built-in rule for %s %s", c.apiVersion, gk.Kind), c.list),
			pods: c.pods, podComponent: c.component}
	}
	return kinds
}
