package interpreter

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// HealthResult is a health verdict with a short reason for humans (events,
// logs); the reason is not part of the API.
type HealthResult struct {
	Health policyv1alpha1.ResourceHealth
	Reason string
}

// Health judges a member's copy: Healthy, Unhealthy or Unknown, with the
// reason. The rule is the HealthInterpreter's for the object's exact
// group, version and kind, else its customization's, else the built-in
// one (for the version the built-in rule reads); a kind without any is
// Unknown. The built-in rules err towards Unhealthy only for states a user
// would call broken or not yet serving, and towards Unknown for what they
// cannot read: Unknown never triggers failover.
func (l *Layered) Health(obj *unstructured.Unstructured) HealthResult {
	if obj == nil {
		return unknown("object not found")
	}
	gvk := obj.GroupVersionKind()
	l.mu.RLock()
	f, ok := l.healthRules[gvk]
	if !ok {
		f, ok = l.customHealth[gvk]
	}
	l.mu.RUnlock()
	if ok {
		return f(obj)
	}
	if k := builtin[gvk.GroupKind()]; k != nil && k.health != nil && k.apiVersion == gvk.GroupVersion().String() {
		return k.health(obj)
	}
	return unknown("no health interpreter for %s", gvk.String())
}

// typed adapts a rule on a typed object (e.g. *appsv1.Deployment) to the
// member's unstructured copy. A conversion failure means the member sent
// something we cannot read: Unknown.
func typed[T any](interpret func(*T) HealthResult) func(*unstructured.Unstructured) HealthResult {
	return func(obj *unstructured.Unstructured) HealthResult {
		t := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, t); err != nil {
			return HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf("cannot decode %s: %v", obj.GetKind(), err)}
		}
		return interpret(t)
	}
}

func healthy(reason string) HealthResult {
	return HealthResult{Health: policyv1alpha1.ResourceHealthy, Reason: reason}
}

func unhealthy(format string, args ...any) HealthResult {
	return HealthResult{Health: policyv1alpha1.ResourceUnhealthy, Reason: fmt.Sprintf(format, args...)}
}

// replicasOf returns *p, or Kubernetes' default of 1 replica when unset.
func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// deploymentHealth: Healthy when the Deployment controller has seen the
// latest spec (observedGeneration >= generation) and every desired replica
// runs the current template and is available (updatedReplicas and
// availableReplicas both equal spec.replicas), with no old replica left
// (status.replicas not above updatedReplicas, as `kubectl rollout status`
// waits for).
//
// Rollout semantics: while a rolling update is in progress the copy is
// Unhealthy ("RolloutInProgress"): it does not yet serve the desired version
// at full capacity. That is deliberate — a copy stuck half-way must not
// count as Healthy — so consumers must not act on a fresh Unhealthy:
// application failover waits for unhealthySince + its toleration, which
// should exceed the Deployment's progressDeadlineSeconds (600 s by
// default). When the deadline passes the controller sets Progressing=False
// (ProgressDeadlineExceeded) and the reason says so. A paused Deployment
// stays Unhealthy until resumed if its rollout was not complete.
func deploymentHealth(d *appsv1.Deployment) HealthResult {
	want := replicasOf(d.Spec.Replicas)
	s := d.Status
	if s.ObservedGeneration < d.Generation {
		return unhealthy("RolloutInProgress: observedGeneration %d < generation %d", s.ObservedGeneration, d.Generation)
	}
	for _, c := range s.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return unhealthy("ProgressDeadlineExceeded: %s", c.Message)
		}
	}
	if s.UpdatedReplicas != want || s.AvailableReplicas != want {
		return unhealthy("RolloutInProgress: %d/%d updated, %d/%d available", s.UpdatedReplicas, want, s.AvailableReplicas, want)
	}
	// A surge: the new replicas exist but old ones still serve, and may
	// be the ones available (a new image whose pods never turn ready
	// still shows every replica updated and the old one available).
	if s.Replicas > s.UpdatedReplicas {
		return unhealthy("RolloutInProgress: %d old replicas pending termination", s.Replicas-s.UpdatedReplicas)
	}
	return healthy("all replicas updated and available")
}

// statefulSetHealth: Healthy when the latest spec is observed, every
// desired replica is available, and — for a RollingUpdate without a
// partition — every replica runs the update revision. OnDelete and
// partitioned updates intentionally leave old replicas, so they are not
// required to be updated.
func statefulSetHealth(s *appsv1.StatefulSet) HealthResult {
	want := replicasOf(s.Spec.Replicas)
	st := s.Status
	if st.ObservedGeneration < s.Generation {
		return unhealthy("RolloutInProgress: observedGeneration %d < generation %d", st.ObservedGeneration, s.Generation)
	}
	if st.AvailableReplicas != want {
		return unhealthy("%d/%d replicas available", st.AvailableReplicas, want)
	}
	if fullRollingUpdate(s.Spec.UpdateStrategy) && st.UpdatedReplicas != want {
		return unhealthy("RolloutInProgress: %d/%d replicas updated", st.UpdatedReplicas, want)
	}
	return healthy("all replicas available")
}

func fullRollingUpdate(u appsv1.StatefulSetUpdateStrategy) bool {
	if u.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return false
	}
	ru := u.RollingUpdate
	return ru == nil || ru.Partition == nil || *ru.Partition == 0
}

// replicaSetHealth: Healthy when the latest spec is observed and every
// desired replica is available.
func replicaSetHealth(rs *appsv1.ReplicaSet) HealthResult {
	want := replicasOf(rs.Spec.Replicas)
	if rs.Status.ObservedGeneration < rs.Generation {
		return unhealthy("observedGeneration %d < generation %d", rs.Status.ObservedGeneration, rs.Generation)
	}
	if rs.Status.AvailableReplicas != want {
		return unhealthy("%d/%d replicas available", rs.Status.AvailableReplicas, want)
	}
	return healthy("all replicas available")
}

// daemonSetHealth: Healthy when the latest spec is observed and every node
// that should run a pod runs an updated, available one. A DaemonSet that
// should run nowhere (desired 0) is Healthy.
func daemonSetHealth(ds *appsv1.DaemonSet) HealthResult {
	st := ds.Status
	if st.ObservedGeneration < ds.Generation {
		return unhealthy("RolloutInProgress: observedGeneration %d < generation %d", st.ObservedGeneration, ds.Generation)
	}
	if st.UpdatedNumberScheduled != st.DesiredNumberScheduled {
		return unhealthy("RolloutInProgress: %d/%d pods updated", st.UpdatedNumberScheduled, st.DesiredNumberScheduled)
	}
	if st.NumberAvailable != st.DesiredNumberScheduled {
		return unhealthy("%d/%d pods available", st.NumberAvailable, st.DesiredNumberScheduled)
	}
	return healthy("all pods updated and available")
}

// jobHealth: a Job that failed (Failed, or FailureTarget while its pods are
// being terminated) is Unhealthy; one that completed or is still running is
// Healthy — a running Job is doing what it was asked to, and failing it
// over mid-run would only restart the work.
func jobHealth(j *batchv1.Job) HealthResult {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			return unhealthy("%s: %s", c.Reason, c.Message)
		case batchv1.JobComplete, batchv1.JobSuccessCriteriaMet:
			return healthy("complete")
		}
	}
	return healthy("running")
}

// podHealth: Succeeded, or Running with Ready=True, is Healthy; Failed is
// Unhealthy. Pending is Unhealthy too: the pod is not serving (no node, or
// images still pulling); failover's toleration absorbs ordinary start-up.
// A Running pod that is not Ready is Unhealthy. Phase Unknown (node lost)
// or empty is Unknown.
func podHealth(p *corev1.Pod) HealthResult {
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return healthy("succeeded")
	case corev1.PodFailed:
		return unhealthy("failed: %s", p.Status.Reason)
	case corev1.PodPending:
		return unhealthy("pending")
	case corev1.PodRunning:
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return healthy("running and ready")
			}
		}
		return unhealthy("running but not ready")
	}
	return unknown("phase %q", p.Status.Phase)
}

// serviceHealth: a LoadBalancer Service is Healthy once the cloud assigned
// an ingress point; every other type works as soon as it exists.
func serviceHealth(s *corev1.Service) HealthResult {
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return healthy("service exists")
	}
	if len(s.Status.LoadBalancer.Ingress) == 0 {
		return unhealthy("load balancer has no ingress yet")
	}
	return healthy("load balancer has an ingress")
}

// pvcHealth: a claim is Healthy once Bound; Pending (no volume yet) and
// Lost (volume gone) are Unhealthy.
func pvcHealth(c *corev1.PersistentVolumeClaim) HealthResult {
	if c.Status.Phase == corev1.ClaimBound {
		return healthy("bound")
	}
	if c.Status.Phase == "" {
		return unhealthy("not bound yet")
	}
	return unhealthy("phase %s", c.Status.Phase)
}

func unknown(format string, args ...any) HealthResult {
	return HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf(format, args...)}
}
