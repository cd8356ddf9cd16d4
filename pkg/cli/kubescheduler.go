package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/schedplugin"
)

// newKubeSchedulerCommand wraps the upstream kube-scheduler command with
// Shepherd's out-of-tree plugins registered, the way out-of-tree plugins
// are meant to be built. The upstream command is only constructed when
// this one runs: constructing it registers kube-scheduler's options and
// feature gates in process-wide registries, which other commands (`up`,
// with its embedded apiservers) must not see. Its flags, help, logging and
// signal handling are upstream's.
func newKubeSchedulerCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "kube-scheduler [kube-scheduler flags]",
		Short: "Run kube-scheduler with Shepherd's PodRescheduling plugin",
		Long: `Run the upstream kube-scheduler with Shepherd's out-of-tree plugins
registered: PodRescheduling keeps pods off the nodes listed in their
shepherd.io/excluded-nodes annotation (see docs/pod-rescheduling.md).

Enable it in a profile with --config; config/podrescheduler/scheduler-config.yaml
runs it as a second scheduler, "shepherd-scheduler". Every flag is
kube-scheduler's own: run "shepherd kube-scheduler --help" for them.`,
		Example: `  shepherd kube-scheduler --config config/podrescheduler/scheduler-config.yaml \
    --kubeconfig /etc/kubernetes/scheduler.conf`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			sched := app.NewSchedulerCommand(app.WithPlugin(schedplugin.Name, schedplugin.New))
			sched.SetArgs(args)
			sched.SetOut(cmd.OutOrStdout())
			sched.SetErr(cmd.ErrOrStderr())
			return sched.ExecuteContext(cmd.Context())
		},
	}
}
