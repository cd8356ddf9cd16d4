package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

// autoscalersHeader is the header of `shepherd get autoscalers`.
const autoscalersHeader = "NAMESPACE\tNAME\tKIND\tTARGET\tMIN..MAX\tCURRENT/DESIRED\tDETAILS"

// fhpaRow is a FederatedHPA's row; DETAILS is each cluster's utilization
// per resource, or why it was left out.
func fhpaRow(f *autoscalingv1alpha1.FederatedHPA) []string {
	var parts []string
	for _, c := range f.Status.Clusters {
		if c.Excluded != "" {
			parts = append(parts, fmt.Sprintf("%s=[left out: %s]", c.Name, c.Excluded))
			continue
		}
		var rs []string
		for _, r := range c.Resources {
			switch {
			case r.AverageUtilization != nil:
				rs = append(rs, fmt.Sprintf("%s %d%%", r.Name, *r.AverageUtilization))
			case r.AverageValue != nil:
				rs = append(rs, fmt.Sprintf("%s %s", r.Name, r.AverageValue.String()))
			}
		}
		cell := fmt.Sprintf("%s=%d pods", c.Name, c.Pods)
		if len(rs) > 0 {
			cell += " " + strings.Join(rs, " ")
		}
		parts = append(parts, cell)
	}
	ref := f.Spec.ScaleTargetRef
	return []string{f.Namespace, f.Name, "FederatedHPA", ref.Kind + "/" + ref.Name,
		fmt.Sprintf("%d..%d", ptr.Deref(f.Spec.MinReplicas, 1), f.Spec.MaxReplicas),
		fmt.Sprintf("%d/%d", f.Status.CurrentReplicas, f.Status.DesiredReplicas), dash(strings.Join(parts, ", "))}
}

// cronRow is a CronFederatedHPA's row; DETAILS is each rule's next run
// and last outcome.
func cronRow(c *autoscalingv1alpha1.CronFederatedHPA) []string {
	hist := map[string]autoscalingv1alpha1.ExecutionHistory{}
	for _, h := range c.Status.ExecutionHistories {
		hist[h.RuleName] = h
	}
	var parts []string
	for _, r := range c.Spec.Rules {
		h := hist[r.Name]
		cell := r.Name + ": "
		switch {
		case ptr.Deref(r.Suspend, false):
			cell += "suspended"
		case h.NextExecutionTime != nil:
			cell += "next " + h.NextExecutionTime.UTC().Format(time.RFC3339)
		default:
			cell += "next -"
		}
		var lastOK, lastFail time.Time
		if len(h.SuccessfulExecutions) > 0 && h.SuccessfulExecutions[0].ScheduleTime != nil {
			lastOK = h.SuccessfulExecutions[0].ScheduleTime.Time
		}
		if len(h.FailedExecutions) > 0 && h.FailedExecutions[0].ScheduleTime != nil {
			lastFail = h.FailedExecutions[0].ScheduleTime.Time
		}
		switch {
		case !lastFail.IsZero() && lastFail.After(lastOK):
			cell += ", last failed: " + h.FailedExecutions[0].Message
		case !lastOK.IsZero():
			cell += ", last ran " + lastOK.UTC().Format(time.RFC3339)
		}
		parts = append(parts, cell)
	}
	ref := c.Spec.ScaleTargetRef
	return []string{c.Namespace, c.Name, "CronFederatedHPA", ref.Kind + "/" + ref.Name, "-", "-", dash(strings.Join(parts, "; "))}
}

// printAutoscalers prints the FederatedHPAs and CronFederatedHPAs of the
// namespace (all with namespace ""), sorted by namespace and name.
func printAutoscalers(ctx context.Context, c client.Client, w io.Writer, namespace string) error {
	var fl autoscalingv1alpha1.FederatedHPAList
	if err := c.List(ctx, &fl, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing FederatedHPAs: %w", err)
	}
	var cl autoscalingv1alpha1.CronFederatedHPAList
	if err := c.List(ctx, &cl, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing CronFederatedHPAs: %w", err)
	}
	var rows [][]string
	for i := range fl.Items {
		rows = append(rows, fhpaRow(&fl.Items[i]))
	}
	for i := range cl.Items {
		rows = append(rows, cronRow(&cl.Items[i]))
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i][0] != rows[j][0] {
			return rows[i][0] < rows[j][0]
		}
		if rows[i][1] != rows[j][1] {
			return rows[i][1] < rows[j][1]
		}
		return rows[i][2] < rows[j][2]
	})
	fmt.Fprintln(w, autoscalersHeader)
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	return nil
}
