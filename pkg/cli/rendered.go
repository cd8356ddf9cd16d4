package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// printRendered prints, for each cluster a workload has a Work in, the
// manifest as rendered for that cluster (its share of the replicas, the
// override policies applied), preceded by a comment naming the cluster and
// the override rules that made it. cluster, when set, limits the output to
// that cluster.
func (o *getOptions) printRendered(ctx context.Context, c client.Client, w io.Writer, arg, cluster string) error {
	typ, name, ok := strings.Cut(arg, "/")
	if !ok || typ == "" || name == "" {
		return fmt.Errorf("%q: want TYPE/NAME, e.g. deployment/web", arg)
	}
	_, kind, ok := interpreter.KindByName(typ)
	if !ok {
		// Kind.version.group, as shepherd reschedule accepts.
		kind, _, _ = strings.Cut(typ, ".")
	}
	ref := names.BindingRef{Kind: "ResourceBinding", Namespace: o.namespace, Name: names.BindingName(kind, name)}
	var works workv1alpha1.WorkList
	if err := c.List(ctx, &works, client.MatchingLabels(names.BindingLabels(ref))); err != nil {
		return fmt.Errorf("listing the Works of %s: %w", ref.Name, err)
	}
	slices.SortFunc(works.Items, func(a, b workv1alpha1.Work) int {
		return strings.Compare(a.Labels[workv1alpha1.LabelCluster], b.Labels[workv1alpha1.LabelCluster])
	})
	shown := 0
	for _, wk := range works.Items {
		cl := wk.Labels[workv1alpha1.LabelCluster]
		if cluster != "" && cl != cluster {
			continue
		}
		overrides := wk.Annotations[workv1alpha1.AnnotationAppliedOverrides]
		if overrides == "" {
			overrides = "none"
		}
		for _, m := range wk.Spec.Workload.Manifests {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(m.Raw); err != nil {
				return fmt.Errorf("Work %s/%s: %w", wk.Namespace, wk.Name, err)
			}
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "---\n# cluster: %s\n# overrides: %s\n%s", cl, overrides, data)
			shown++
		}
	}
	if shown == 0 {
		return fmt.Errorf("no rendering of %s/%s in namespace %s%s: is it propagated (shepherd get placements)?", typ, name, o.namespace,
			map[bool]string{true: " for cluster " + cluster, false: ""}[cluster != ""])
	}
	return nil
}
