package federatedhpa

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

// DefaultTolerance is how far a usage ratio may be from 1 before the count
// changes, a HorizontalPodAutoscaler's default.
const DefaultTolerance = 0.1

// pod is one pod of the target in a member, as the metrics read it.
type pod struct {
	name string
	// ignored: deleting or Failed; never counted.
	ignored bool
	// pending: Pending; counted as unready.
	pending bool
	// notReady: not running and Ready; an Object metric's Value target
	// counts the ready pods.
	notReady bool
	// unreadyCPU: not ready by the CPU rule (cpuUnready); only CPU reads it.
	unreadyCPU bool
	// request and usage per metric, in milli-units, indexed as the spec's
	// metrics; hasUsage says whether a sample was read.
	request  []int64
	usage    []int64
	hasUsage []bool
	// requestErr says why request could not be summed (a container
	// without a request), per metric; empty when it could.
	requestErr []string
}

// cluster is what one member gave for the target.
type cluster struct {
	name string
	// excluded says why the cluster's pods are left out of every metric
	// (unreachable, its pods not readable); empty when they count.
	excluded string
	// leftOut says per metric why the cluster is left out of that one
	// (its values missing or stale, the API not readable); empty, or
	// shorter than the metrics, when it counts.
	leftOut []string
	pods    []pod
	// object holds per metric the value of an Object metric read in this
	// member, when read.
	object    []int64
	hasObject []bool
}

// out says why the cluster is left out of metric i; empty when it counts.
func (c *cluster) out(i int) string {
	if c.excluded != "" {
		return c.excluded
	}
	if i < len(c.leftOut) {
		return c.leftOut[i]
	}
	return ""
}

// objectValue is the cluster's value of Object metric i, if read.
func (c *cluster) objectValue(i int) (int64, bool) {
	if i < len(c.hasObject) && i < len(c.object) && c.hasObject[i] {
		return c.object[i], true
	}
	return 0, false
}

// why says why the cluster is left out of any metric: its exclusion, or
// the distinct reasons it is left out of some, in the metrics' order;
// empty when it counts in all.
func (c *cluster) why() string {
	if c.excluded != "" {
		return c.excluded
	}
	var reasons []string
	for _, r := range c.leftOut {
		if r != "" && !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	return strings.Join(reasons, "; ")
}

// tolerances are the scale-down and scale-up tolerances around ratio 1.
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool { return 1-t.down <= ratio && ratio <= 1+t.up }

// tolerancesOf reads behavior's per-direction tolerances, else def.
func tolerancesOf(b *autoscalingv2.HorizontalPodAutoscalerBehavior, def float64) tolerances {
	t := tolerances{def, def}
	if b != nil && b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
		t.down = b.ScaleDown.Tolerance.AsApproximateFloat64()
	}
	if b != nil && b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
		t.up = b.ScaleUp.Tolerance.AsApproximateFloat64()
	}
	return t
}

// cpuUnready is the HorizontalPodAutoscaler's rule for a pod whose CPU
// sample is not trusted: within the CPU initialization period (5 m), a
// pod that is not ready or became ready less than one metric window
// before the sample; after it, a pod that is not ready and never was.
func cpuUnready(p *corev1.Pod, sampled time.Time, window time.Duration, now time.Time) bool {
	const initPeriod, readinessDelay = 5 * time.Minute, 30 * time.Second
	var ready *corev1.PodCondition
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			ready = &p.Status.Conditions[i]
		}
	}
	if ready == nil || p.Status.StartTime == nil {
		return true
	}
	if p.Status.StartTime.Add(initPeriod).After(now) {
		return ready.Status == corev1.ConditionFalse || sampled.Before(ready.LastTransitionTime.Add(window))
	}
	return ready.Status == corev1.ConditionFalse && p.Status.StartTime.Add(readinessDelay).After(ready.LastTransitionTime.Time)
}

// metricResult is one metric's proposal.
type metricResult struct {
	replicas int32
	status   autoscalingv2.MetricStatus
	// err says why no count came out of this metric.
	err string
	// name describes the metric for conditions and events.
	name string
}

// sample is one counted pod's values for one metric.
type sample struct{ usage, request int64 }

// podProposal is the HorizontalPodAutoscaler's count for a metric measured
// per pod. target is a utilization percent when utilization, else a
// milli-value per pod; extra are the pods of excluded clusters, counted at
// the measured average.
func podProposal(current int32, counted []sample, ready int, unready, missing []int64, target int64, utilization bool, tol tolerances, extra int) (int32, int64, error) {
	if len(counted) == 0 {
		return 0, 0, fmt.Errorf("no metrics for the target's pods (pods might be unready)")
	}
	ratioOf := func(all []sample) (float64, int64, error) {
		var use, req int64
		for _, s := range all {
			use += s.usage
			req += s.request
		}
		if !utilization {
			avg := use / int64(len(all))
			return float64(avg) / float64(target), avg, nil
		}
		if req == 0 {
			return 0, 0, fmt.Errorf("no request among the pods with metrics")
		}
		u := int32(use * 100 / req)
		return float64(u) / float64(target), int64(u), nil
	}
	ratio, value, err := ratioOf(counted)
	if err != nil {
		return 0, 0, err
	}
	upWithUnready := len(unready) > 0 && ratio > 1
	if !upWithUnready && len(missing) == 0 {
		if tol.within(ratio) {
			return current, value, nil
		}
		return ceilCount(ratio * float64(ready+extra)), value, nil
	}
	all := append([]sample(nil), counted...)
	for _, req := range missing {
		switch {
		case ratio < 1 && utilization: // scale-down: as if at 100% of its request (or the target above it)
			all = append(all, sample{usage: req * max(100, target) / 100, request: req})
		case ratio < 1:
			all = append(all, sample{usage: target})
		case ratio > 1: // scale-up: as if idle
			all = append(all, sample{request: req})
		}
	}
	if upWithUnready {
		for _, req := range unready {
			all = append(all, sample{request: req})
		}
	}
	again, _, err := ratioOf(all)
	if err != nil {
		return 0, 0, err
	}
	if tol.within(again) || (ratio < 1 && again > 1) || (ratio > 1 && again < 1) {
		return current, value, nil
	}
	n := ceilCount(again * float64(len(all)+extra))
	if (again < 1 && n > current) || (again > 1 && n < current) {
		return current, value, nil
	}
	return n, value, nil
}

func ceilCount(f float64) int32 {
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(math.Ceil(f))
}

// perPod computes metric i of spec over the clusters' pods: Resource,
// ContainerResource and Pods metrics. A Pods metric is a value per pod
// (the average over every counted pod of every member against an
// AverageValue target), read per pod as a resource's usage is.
func perPod(i int, m autoscalingv2.MetricSpec, current int32, clusters []cluster, tol tolerances) metricResult {
	res, target, name := perPodTarget(m)
	r := metricResult{name: name, replicas: current}
	if target == nil {
		r.err = fmt.Sprintf("%s: the target needs averageUtilization or averageValue", name)
		return r
	}
	utilization := target.Type == autoscalingv2.UtilizationMetricType
	var want int64
	if utilization {
		want = int64(*target.AverageUtilization)
	} else if target.AverageValue != nil {
		want = target.AverageValue.MilliValue()
	}
	if want <= 0 {
		r.err = fmt.Sprintf("%s: the target must be above zero", name)
		return r
	}
	if m.Type == autoscalingv2.PodsMetricSourceType {
		if _, err := customRequest(m); err != nil {
			r.err = err.Error()
			return r
		}
	}
	var counted []sample
	var unready, missing []int64
	ready, extra := 0, 0
	for _, c := range clusters {
		if c.out(i) != "" {
			for _, p := range c.pods {
				if !p.ignored {
					extra++
				}
			}
			continue
		}
		for _, p := range c.pods {
			if p.ignored {
				continue
			}
			if utilization && p.requestErr[i] != "" {
				r.err = fmt.Sprintf("%s: %s", name, p.requestErr[i])
				return r
			}
			switch {
			case p.pending:
				unready = append(unready, p.request[i])
			case !p.hasUsage[i]:
				missing = append(missing, p.request[i])
			case res == corev1.ResourceCPU && p.unreadyCPU:
				unready = append(unready, p.request[i])
			default:
				ready++
				counted = append(counted, sample{usage: p.usage[i], request: p.request[i]})
			}
		}
	}
	n, value, err := podProposal(current, counted, ready, unready, missing, want, utilization, tol, extra)
	if err != nil {
		r.err = fmt.Sprintf("%s: %v", name, err)
		return r
	}
	r.replicas = n
	r.status = perPodStatus(m, value, utilization)
	return r
}

// perPodTarget is the resource (empty for Pods metrics), target and name
// of a per-pod metric; a nil target when the spec lacks it.
func perPodTarget(m autoscalingv2.MetricSpec) (corev1.ResourceName, *autoscalingv2.MetricTarget, string) {
	switch {
	case m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil:
		t := m.Resource.Target
		if (t.Type == autoscalingv2.UtilizationMetricType && t.AverageUtilization == nil) || (t.Type != autoscalingv2.UtilizationMetricType && t.AverageValue == nil) {
			return m.Resource.Name, nil, string(m.Resource.Name) + " resource"
		}
		return m.Resource.Name, &t, string(m.Resource.Name) + " resource"
	case m.Type == autoscalingv2.ContainerResourceMetricSourceType && m.ContainerResource != nil:
		t := m.ContainerResource.Target
		name := fmt.Sprintf("%s resource of container %s", m.ContainerResource.Name, m.ContainerResource.Container)
		if (t.Type == autoscalingv2.UtilizationMetricType && t.AverageUtilization == nil) || (t.Type != autoscalingv2.UtilizationMetricType && t.AverageValue == nil) {
			return m.ContainerResource.Name, nil, name
		}
		return m.ContainerResource.Name, &t, name
	case m.Type == autoscalingv2.PodsMetricSourceType && m.Pods != nil:
		t := m.Pods.Target
		t.Type = autoscalingv2.AverageValueMetricType
		if t.AverageValue == nil {
			return "", nil, "pods metric " + m.Pods.Metric.Name
		}
		return "", &t, "pods metric " + m.Pods.Metric.Name
	}
	return "", nil, string(m.Type) + " metric"
}

// perPodStatus is the MetricStatus of a per-pod metric's current value.
func perPodStatus(m autoscalingv2.MetricSpec, value int64, utilization bool) autoscalingv2.MetricStatus {
	cur := autoscalingv2.MetricValueStatus{}
	if utilization {
		u := int32(value)
		cur.AverageUtilization = &u
	} else {
		cur.AverageValue = resource.NewMilliQuantity(value, resource.DecimalSI)
	}
	s := autoscalingv2.MetricStatus{Type: m.Type}
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		s.Resource = &autoscalingv2.ResourceMetricStatus{Name: m.Resource.Name, Current: cur}
	case autoscalingv2.ContainerResourceMetricSourceType:
		s.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container, Current: cur}
	case autoscalingv2.PodsMetricSourceType:
		s.Pods = &autoscalingv2.PodsMetricStatus{Metric: m.Pods.Metric, Current: cur}
	}
	return s
}

// perObject computes metric i, an Object metric. Each member holds its
// own copy of the object, whose value there tells that member's load.
// An AverageValue target is a value per pod: the members' values add up
// to the fleet's, which asks for value / target pods. A Value target is
// the value each copy should have: each member's value is weighed by its
// ready pods (what a HorizontalPodAutoscaler in each member would ask,
// added up), and the count is the ready pods times that mean over the
// target. The pods of members left out count at the measured members'
// value per pod.
func perObject(i int, m autoscalingv2.MetricSpec, current, status int32, clusters []cluster, tol tolerances) metricResult {
	if m.Object == nil {
		return metricResult{replicas: current, name: string(m.Type) + " metric", err: fmt.Sprintf("spec.metrics[%d]: %s needs its source", i, m.Type)}
	}
	req, err := customRequest(m)
	r := metricResult{replicas: current, name: req.String()}
	if err != nil {
		r.err = err.Error()
		return r
	}
	target := m.Object.Target
	// usage sums the measured members' values and weighted each value
	// times the member's ready pods; ready counts those pods, extra the
	// pods of the members left out.
	var usage, weighted float64
	read, ready, extra := 0, 0, 0
	for _, c := range clusters {
		if c.out(i) != "" {
			for _, p := range c.pods {
				if !p.ignored {
					extra++
				}
			}
			continue
		}
		v, ok := c.objectValue(i)
		if !ok {
			continue
		}
		n := 0
		for _, p := range c.pods {
			if !p.ignored && !p.notReady {
				n++
			}
		}
		read++
		usage += float64(v)
		weighted += float64(v) * float64(n)
		ready += n
	}
	if read == 0 {
		r.err = fmt.Sprintf("%s: not read in any member", r.name)
		return r
	}
	cur := autoscalingv2.MetricValueStatus{}
	switch {
	case target.Type == autoscalingv2.ValueMetricType && target.Value != nil && target.Value.MilliValue() > 0:
		mean := usage / float64(read)
		if ready > 0 {
			mean = weighted / float64(ready)
		}
		ratio := mean / float64(target.Value.MilliValue())
		switch {
		case current == 0:
			r.replicas = ceilCount(ratio)
		case !tol.within(ratio):
			r.replicas = ceilCount(ratio * float64(ready+extra))
		}
		cur.Value = resource.NewMilliQuantity(int64(math.Ceil(mean)), resource.DecimalSI)
	case target.Type == autoscalingv2.AverageValueMetricType && target.AverageValue != nil && target.AverageValue.MilliValue() > 0 && status > 0:
		if extra > 0 && ready > 0 {
			usage = usage * float64(ready+extra) / float64(ready)
		}
		want := float64(target.AverageValue.MilliValue())
		r.replicas = status
		if !tol.within(usage / (want * float64(status))) {
			r.replicas = ceilCount(usage / want)
		}
		cur.AverageValue = resource.NewMilliQuantity(int64(math.Ceil(usage/float64(status))), resource.DecimalSI)
	default:
		r.err = fmt.Sprintf("%s: the target needs a value or averageValue above zero", r.name)
		return r
	}
	r.status = autoscalingv2.MetricStatus{Type: m.Type, Object: &autoscalingv2.ObjectMetricStatus{Metric: m.Object.Metric, DescribedObject: m.Object.DescribedObject, Current: cur}}
	return r
}

// perExternal refuses an External metric: it describes something outside
// the clusters (a cloud queue, say), the same whichever member is asked,
// so no member's value is that member's share of the load, and neither
// adding the members' values nor averaging them gives the fleet's.
func perExternal(m autoscalingv2.MetricSpec, current int32) metricResult {
	name := "external metric"
	if m.External != nil {
		name += " " + m.External.Metric.Name
	}
	return metricResult{replicas: current, name: name, err: name + ": not read: an External metric describes something outside the clusters, " +
		"the same whichever member is asked, so no member's value is its share of the fleet's load and no count can be made from them; " +
		"scale on a Pods or Object metric the members serve"}
}

// defaultMetrics are a HorizontalPodAutoscaler's: CPU at 80%.
func defaultMetrics() []autoscalingv2.MetricSpec {
	u := int32(80)
	return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u}}}}
}

// proposal is the count the metrics ask for, before behavior and bounds.
type proposal struct {
	replicas int32
	// metric names the metric that gave the count.
	metric   string
	statuses []autoscalingv2.MetricStatus
	// err is set when no count can be trusted: every metric failed, or
	// some failed and the others would scale down.
	err string
	// excluded names the clusters left out, with why.
	excluded []string
}

// propose computes every metric and takes the highest count, as a
// HorizontalPodAutoscaler does. status is the target's status replicas.
func propose(metrics []autoscalingv2.MetricSpec, current, status int32, clusters []cluster, tol tolerances) proposal {
	var p proposal
	for _, c := range clusters {
		if why := c.why(); why != "" {
			p.excluded = append(p.excluded, c.name+" ("+why+")")
		}
	}
	var errs []string
	p.replicas = -1
	for i, m := range metrics {
		var r metricResult
		switch m.Type {
		case autoscalingv2.ObjectMetricSourceType:
			r = perObject(i, m, current, status, clusters, tol)
		case autoscalingv2.ExternalMetricSourceType:
			r = perExternal(m, current)
		default:
			r = perPod(i, m, current, clusters, tol)
		}
		if r.err != "" {
			errs = append(errs, r.err)
			continue
		}
		p.statuses = append(p.statuses, r.status)
		if r.replicas > p.replicas {
			p.replicas, p.metric = r.replicas, r.name
		}
	}
	if len(errs) == len(metrics) || (len(errs) > 0 && p.replicas < current) {
		p.replicas, p.err = current, strings.Join(errs, "; ")
		return p
	}
	if len(p.excluded) > 0 && p.replicas < current {
		// Scaling down on part of the fleet's load could take away the
		// replicas the clusters not measured need.
		p.replicas = current
	}
	return p
}

// utilizations is the per-cluster part of the status: each cluster's
// average per resource metric over its pods with samples.
func utilizations(metrics []autoscalingv2.MetricSpec, clusters []cluster) []autoscalingv1alpha1.ClusterUtilization {
	out := make([]autoscalingv1alpha1.ClusterUtilization, 0, len(clusters))
	for _, c := range clusters {
		u := autoscalingv1alpha1.ClusterUtilization{Name: c.name, Excluded: c.why()}
		for _, p := range c.pods {
			if p.ignored {
				continue
			}
			u.Pods++
			if !p.pending && !p.unreadyCPU {
				u.ReadyPods++
			}
		}
		for i, m := range metrics {
			if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil || c.out(i) != "" || hasResource(u.Resources, m.Resource.Name) {
				continue
			}
			var use, req, n int64
			for _, p := range c.pods {
				if !p.ignored && p.hasUsage[i] {
					use, req, n = use+p.usage[i], req+p.request[i], n+1
				}
			}
			if n == 0 {
				continue
			}
			r := autoscalingv1alpha1.ResourceUtilization{Name: m.Resource.Name, AverageValue: resource.NewMilliQuantity(use/n, resource.DecimalSI)}
			if req > 0 {
				pct := int32(use * 100 / req)
				r.AverageUtilization = &pct
			}
			u.Resources = append(u.Resources, r)
		}
		out = append(out, u)
	}
	return out
}

func hasResource(rs []autoscalingv1alpha1.ResourceUtilization, name corev1.ResourceName) bool {
	for _, r := range rs {
		if r.Name == name {
			return true
		}
	}
	return false
}
