package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// bystander is a member object Shepherd neither created nor adopted: its
// resourceVersion must never change.
type bystander struct {
	cluster, ns, name, resourceVersion string
}

// copyOf is a member copy of a template, as a check reads it.
type copyOf struct {
	labels, annotations map[string]string
	// edit is the ConfigMap's data.edit, the Widget's spec.edit or the
	// Deployment's pod-template edit count; replicas the Deployment's.
	edit     string
	replicas int32
}

// fleetState is everything the invariants read, listed once per check.
type fleetState struct {
	templates map[string]copyOf                        // ns/kind/name -> the hub's template
	bindings  map[string]*workv1alpha1.ResourceBinding // ns/kind/name
	works     map[string][]string                      // ns/kind/name@cluster -> Work names
	copies    map[string]map[string]copyOf             // cluster -> ns/kind/name -> copy
	tasks     []taskv1alpha1.RescheduleTask
	objects   map[string]map[string]string // cluster -> ns/name of ConfigMaps -> resourceVersion
	clusters  map[string]clusterHealth
}

// clusterHealth is a Cluster as the hub judges it.
type clusterHealth struct {
	ready  *metav1.Condition
	taints []string // the readiness taints, key:effect
	// leaseOff, for a Pull cluster whose agent holds its Lease, is its
	// renewTime less the time it was read: the agent's clock's offset,
	// less the time since the renewal.
	leaseOff *time.Duration
}

func key(ns, kind, name string) string { return ns + "/" + kind + "/" + name }

func readCM(cm *corev1.ConfigMap) copyOf {
	return copyOf{labels: cm.Labels, annotations: cm.Annotations, edit: cm.Data["edit"]}
}

func readDeploy(d *appsv1.Deployment) copyOf {
	c := copyOf{labels: d.Labels, annotations: d.Annotations, edit: d.Spec.Template.Annotations[annotationEdit]}
	if d.Spec.Replicas != nil {
		c.replicas = *d.Spec.Replicas
	}
	return c
}

// list reads a cluster's ConfigMaps, Widgets and Deployments of the
// workload's namespaces: the workload's (by key) and every ConfigMap's
// resourceVersion (for bystanders).
func list(ctx context.Context, c client.Client) (map[string]copyOf, map[string]string, error) {
	out, rvs := map[string]copyOf{}, map[string]string{}
	for _, ns := range namespaces {
		cms := &corev1.ConfigMapList{}
		if err := c.List(ctx, cms, client.InNamespace(ns)); err != nil {
			return nil, nil, err
		}
		for i := range cms.Items {
			cm := &cms.Items[i]
			rvs[ns+"/"+cm.Name] = cm.ResourceVersion
			if cm.Labels[labelStrategy] != "" {
				out[key(ns, "ConfigMap", cm.Name)] = readCM(cm)
			}
		}
		ws := &unstructured.UnstructuredList{}
		ws.SetAPIVersion(apiVersions["Widget"])
		ws.SetKind("WidgetList")
		// A member that does not serve the kind (its CRD evicted from it,
		// or not back yet) holds no Widget: the scheduler places none
		// there, and a binding that still names it shows as missing.
		if err := c.List(ctx, ws, client.InNamespace(ns)); err != nil && !meta.IsNoMatchError(err) {
			return nil, nil, err
		}
		for i := range ws.Items {
			w := &ws.Items[i]
			if w.GetLabels()[labelStrategy] != "" {
				edit, _, _ := unstructured.NestedString(w.Object, "spec", "edit")
				out[key(ns, "Widget", w.GetName())] = copyOf{labels: w.GetLabels(), annotations: w.GetAnnotations(), edit: edit}
			}
		}
		ds := &appsv1.DeploymentList{}
		if err := c.List(ctx, ds, client.InNamespace(ns)); err != nil {
			return nil, nil, err
		}
		for i := range ds.Items {
			if ds.Items[i].Labels[labelStrategy] != "" {
				out[key(ns, "Deployment", ds.Items[i].Name)] = readDeploy(&ds.Items[i])
			}
		}
	}
	return out, rvs, nil
}

func (cf *chaosFleet) read(ctx context.Context) (*fleetState, error) {
	s := &fleetState{bindings: map[string]*workv1alpha1.ResourceBinding{}, works: map[string][]string{},
		copies: map[string]map[string]copyOf{}, objects: map[string]map[string]string{}}
	var err error
	if s.templates, _, err = list(ctx, cf.env.Hub); err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		rbs := &workv1alpha1.ResourceBindingList{}
		if err := cf.env.Hub.List(ctx, rbs, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for i := range rbs.Items {
			r := rbs.Items[i].Spec.Resource
			s.bindings[key(ns, r.Kind, r.Name)] = &rbs.Items[i]
		}
	}
	byName := map[string]string{} // binding ns/name -> template key
	for k, b := range s.bindings {
		byName[b.Namespace+"/"+b.Name] = k
	}
	works := &workv1alpha1.WorkList{}
	if err := cf.env.Hub.List(ctx, works); err != nil {
		return nil, err
	}
	for _, w := range works.Items {
		l := w.Labels
		if !slices.Contains(namespaces, l[workv1alpha1.LabelBindingNamespace]) {
			continue
		}
		k, ok := byName[l[workv1alpha1.LabelBindingNamespace]+"/"+l[workv1alpha1.LabelBindingName]]
		if !ok {
			k = "binding " + l[workv1alpha1.LabelBindingNamespace] + "/" + l[workv1alpha1.LabelBindingName] + " (gone)"
		}
		wk := k + "@" + l[workv1alpha1.LabelCluster]
		s.works[wk] = append(s.works[wk], w.Namespace+"/"+w.Name)
	}
	for name, c := range cf.env.Members {
		if s.copies[name], s.objects[name], err = list(ctx, c); err != nil {
			return nil, fmt.Errorf("member %s: %w", name, err)
		}
	}
	tasks := &taskv1alpha1.RescheduleTaskList{}
	if err := cf.env.Hub.List(ctx, tasks); err != nil {
		return nil, err
	}
	s.tasks = tasks.Items
	if s.clusters, err = cf.readClusters(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (cf *chaosFleet) readClusters(ctx context.Context) (map[string]clusterHealth, error) {
	out := map[string]clusterHealth{}
	for name := range cf.env.Members {
		c := &clusterv1alpha1.Cluster{}
		if err := cf.env.Hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			return nil, err
		}
		h := clusterHealth{ready: meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)}
		for _, t := range c.Spec.Taints {
			if t.Key == clusterv1alpha1.TaintClusterNotReady || t.Key == clusterv1alpha1.TaintClusterUnreachable {
				h.taints = append(h.taints, t.Key+":"+string(t.Effect))
			}
		}
		if c.Spec.SyncMode == clusterv1alpha1.Pull {
			st, err := cf.readStamps(ctx, name)
			if err != nil {
				return nil, err
			}
			if st.holder != "" && st.renewed != nil {
				off := time.Until(*st.renewed)
				h.leaseOff = &off
			}
		}
		out[name] = h
	}
	return out, nil
}

// violations lists every broken invariant of a converged fleet, in a
// stable order; none means the fleet is right.
func (s *fleetState) violations(clusters []string, bystanders []bystander) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	keys := make([]string, 0, len(s.templates))
	for k := range s.templates {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		tmpl := s.templates[k]
		b := s.bindings[k]
		if b == nil {
			add("%s: no binding", k)
			continue
		}
		if c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled); c == nil || c.Status != metav1.ConditionTrue {
			add("%s: binding not Scheduled: %v", k, c)
		}
		want := map[string]int32{}
		for _, t := range b.Spec.Clusters {
			if t.State == workv1alpha1.TargetUnscheduled {
				add("%s: target %s still being removed", k, t.Name)
				continue
			}
			want[t.Name] = t.Replicas
		}
		if len(want) == 0 {
			add("%s: placed nowhere", k)
		}
		collides := k == key(namespaceOf(k), "ConfigMap", collidingName)
		for _, c := range clusters {
			n := len(s.works[k+"@"+c])
			got, present := s.copies[c][k]
			replicas, targeted := want[c]
			switch {
			case n > 1:
				add("%s: %d Works for %s: %v", k, n, c, s.works[k+"@"+c])
			case targeted && n == 0:
				add("%s: targets %s but has no Work there", k, c)
			case !targeted && n > 0:
				add("%s: a Work for %s, which it does not target", k, c)
			}
			if collides {
				if present {
					add("%s: the member object Shepherd does not own in %s took the workload's labels", k, c)
				}
				continue
			}
			switch {
			case targeted && !present:
				add("%s: missing in %s", k, c)
			case !targeted && present:
				add("%s: orphan in %s (not a target)", k, c)
			case present:
				if got.edit != tmpl.edit {
					add("%s: stale in %s: edit %q, template %q", k, c, got.edit, tmpl.edit)
				}
				if got.labels[labelOverridden] != "true" || got.annotations[annotationCluster] != c {
					add("%s: overrides missing in %s: labels %v annotations %v", k, c, got.labels, got.annotations)
				}
				if got.annotations[workv1alpha1.AnnotationWork] == "" || got.labels[workv1alpha1.LabelManagedBy] != workv1alpha1.ManagedByShepherd {
					add("%s: copy in %s not marked as Shepherd's", k, c)
				}
				if b.Spec.Replicas > 0 && got.replicas != replicas {
					add("%s: %d replicas in %s, binding says %d", k, got.replicas, c, replicas)
				}
			}
		}
	}
	// Copies whose template is gone, and Works of bindings that are gone.
	for _, c := range clusters {
		for _, k := range slices.Sorted(maps.Keys(s.copies[c])) {
			if _, ok := s.templates[k]; !ok && s.copies[c][k].labels[workv1alpha1.LabelManagedBy] == workv1alpha1.ManagedByShepherd {
				add("%s: orphan in %s (template deleted)", k, c)
			}
		}
	}
	for _, wk := range slices.Sorted(maps.Keys(s.works)) {
		k := wk[:strings.LastIndex(wk, "@")]
		if _, ok := s.templates[k]; !ok && s.bindings[k] == nil {
			add("%s: Works left: %v", wk, s.works[wk])
		}
	}
	for _, by := range bystanders {
		if rv := s.objects[by.cluster][by.ns+"/"+by.name]; rv != by.resourceVersion {
			add("bystander %s/%s in %s changed: resourceVersion %s, was %s", by.ns, by.name, by.cluster, rv, by.resourceVersion)
		}
	}
	for _, t := range s.tasks {
		if c := meta.FindStatusCondition(t.Status.Conditions, taskv1alpha1.ConditionCompleted); c == nil || c.Status != metav1.ConditionTrue {
			add("RescheduleTask %s not Completed: %v", t.Name, c)
		}
	}
	// A healed fleet is Ready everywhere, untainted, and every agent
	// renews its Lease on the hub's clock again: a skewed clock's
	// renewal, or one a lease duration old, is not one.
	for _, c := range clusters {
		h, ok := s.clusters[c]
		switch {
		case !ok:
			continue
		case h.ready == nil || h.ready.Status != metav1.ConditionTrue:
			add("cluster %s not Ready: %v", c, h.ready)
		case len(h.taints) > 0:
			add("cluster %s still tainted: %v", c, h.taints)
		case h.leaseOff != nil && (*h.leaseOff > time.Second || *h.leaseOff < -agentOpts.LeaseDuration):
			add("cluster %s: its agent's Lease renewTime is %s off the hub's clock (renewed every %s)", c, *h.leaseOff, agentOpts.RetryPeriod)
		}
	}
	return out
}

func namespaceOf(k string) string {
	ns, _, _ := strings.Cut(k, "/")
	return ns
}
