package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
)

// followInterval is how often --wait reads the task.
const followInterval = 500 * time.Millisecond

// follow reads the task until it is Completed, calling progress with the
// targets done and in total whenever that changes.
func follow(ctx context.Context, c client.Client, name string, progress func(done, total int)) (*taskv1alpha1.RescheduleTask, error) {
	last := -1
	for {
		task := &taskv1alpha1.RescheduleTask{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, task); err != nil {
			return nil, fmt.Errorf("reading rescheduletask %s: %w", name, err)
		}
		done := 0
		for _, t := range task.Status.Targets {
			if t.Phase != taskv1alpha1.TargetPending {
				done++
			}
		}
		if total := len(task.Status.Targets); total > 0 && done != last {
			progress(done, total)
			last = done
		}
		if meta.IsStatusConditionTrue(task.Status.Conditions, taskv1alpha1.ConditionCompleted) {
			return task, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("rescheduletask %s not completed: %d targets done (%w); is the controller manager running?", name, max(last, 0), ctx.Err())
		case <-time.After(followInterval):
		}
	}
}

// progressBar draws "[#####     ] 1/2 targets done" on a terminal, in
// place; elsewhere it prints nothing (the final table says it all).
func progressBar(out io.Writer) func(done, total int) {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func(int, int) {}
	}
	const width = 30
	return func(done, total int) {
		n := width * done / total
		fmt.Fprintf(out, "\r[%s%s] %d/%d targets done", strings.Repeat("#", n), strings.Repeat(" ", width-n), done, total)
		if done == total {
			fmt.Fprintln(out)
		}
	}
}

// report prints one row per target and fails when some target failed.
func report(out io.Writer, task *taskv1alpha1.RescheduleTask) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WORKLOAD\tBINDING\tRESULT\tREASON")
	failed := 0
	for _, t := range task.Status.Targets {
		if t.Phase == taskv1alpha1.TargetFailed {
			failed++
		}
		r := t.Resource
		workload := fmt.Sprintf("%s/%s", strings.ToLower(r.Kind), r.Name)
		if r.Namespace != "" {
			workload = r.Namespace + "/" + workload
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", workload, dash(t.Binding), t.Phase, dash(t.Reason))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d targets failed", failed, len(task.Status.Targets))
	}
	return nil
}
