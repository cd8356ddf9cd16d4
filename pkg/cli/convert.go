package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/shepherd-io/shepherd/pkg/convert"
	"github.com/shepherd-io/shepherd/pkg/kubeconfig"
)

type convertOptions struct {
	files     []string
	recursive bool
	// kubeconfig and context reach a live Karmada control plane.
	kubeconfig, context string
	outputDir           string
	report              string
	reportFormat        string
	// takeOver prepares the policies to take over Karmada's member objects.
	takeOver bool
	// newLister builds the control plane's lister; tests replace it.
	newLister func(*convertOptions) (convert.Lister, error)
}

func newConvertCommand() *cobra.Command {
	o := &convertOptions{newLister: liveLister}
	cmd := &cobra.Command{
		Use:   "convert (-f FILE|DIR|- ... | --kubeconfig FILE [--context NAME]) [-o DIR]",
		Short: "Convert Karmada policies, interpreter customizations and autoscalers into Shepherd objects",
		Long: `Read Karmada's PropagationPolicies, ClusterPropagationPolicies,
OverridePolicies, ClusterOverridePolicies (policy.karmada.io/v1alpha1),
ResourceInterpreterCustomizations (config.karmada.io/v1alpha1),
FederatedHPAs and CronFederatedHPAs (autoscaling.karmada.io/v1alpha1), and
write the same objects in Shepherd's groups, ready for kubectl apply.

The input is files (multi-document YAML or JSON, Lists too), directories
of them, or "-" for standard input; or a live Karmada control plane
(--kubeconfig, --context), which is only ever listed: the client refuses
any request but a read before it is sent.

Most objects only change apiVersion. Where Karmada and Shepherd read a
field differently, the converter keeps Karmada's meaning when Shepherd can
say it (it writes Karmada's default where Shepherd's differs, drops what
Karmada ignores), and the report lists every field dropped, changed, added
or kept with another meaning, per object, with the file and line it came
from (see docs/migrating-from-karmada.md). The report goes to standard
error, or to --report. A customization's Lua scripts are not translated:
its operations get placeholders the API server refuses until you write
them in CEL. An autoscaler the hub would refuse is reported and not
written: a CronFederatedHPA whose schedule or time zone does not parse, a
FederatedHPA targeting a utilization above 100% or a workload another
FederatedHPA already scales.

Before it is written, every object is checked offline against the CRD of
its kind built into shepherd, as the hub's API server admits it: unknown
fields pruned, defaults applied, then the OpenAPI schema (types, enums,
bounds, patterns), its name, the keys of map and set lists and the CRD's
CEL rules. Shepherd's CRDs bound what Karmada leaves open (at most 100
resourceSelectors, statePreservation rules needing one rule or more, a
jsonPath written {.path}, fieldSelector In and NotIn needing values, ...).
An object the CRD refuses is not written: the report lists it as refused
(rule hub-refuses), naming its file and document, the Shepherd field and
the CRD's message, with the fix when the bound is one the converter knows.

The output is sorted by kind, namespace and name, and converting it again
gives the same objects. The exit status is 1 when anything was not
converted: a document that does not parse, a kind Shepherd has no
equivalent for, an object the hub would refuse, a rule left for you to
write. Everything else is written all the same.`,
		Example: `  # convert a directory of Karmada policies, and read the report
  shepherd convert -f karmada/ -R > shepherd.yaml

  # from standard input, one file per object in out/
  cat policies.yaml | shepherd convert -f - -o out/

  # policies that take over the member objects of a running Karmada fleet
  shepherd convert -f karmada/ -R --take-over-from-karmada > shepherd.yaml

  # everything a running Karmada control plane holds, with a JSON report
  shepherd convert --kubeconfig karmada.config --context karmada-apiserver \
    -o out/ --report report.json --report-format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, `file or directory of Karmada objects, or "-" for standard input; repeatable`)
	cmd.Flags().BoolVarP(&o.recursive, "recursive", "R", false, "read the directories of -f and every directory below them")
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of a live Karmada control plane to read the objects from (read only)")
	cmd.Flags().StringVar(&o.context, "context", "", "context of that kubeconfig (default: its current context)")
	cmd.Flags().StringVarP(&o.outputDir, "output-dir", "o", "", "write one file per object into this directory (default: all to standard output)")
	cmd.Flags().StringVar(&o.report, "report", "", "write the report to this file (default: standard error)")
	cmd.Flags().StringVar(&o.reportFormat, "report-format", "text", "report format: text or json")
	cmd.Flags().BoolVar(&o.takeOver, "take-over-from-karmada", false,
		"prepare the policies to take over a running Karmada fleet's member objects: applyStrategy {whenToTakeOver: IfNoDiff, takeOverFrom: Karmada} on every propagation policy (see docs/migrating-from-karmada.md)")
	return cmd
}

// liveLister reads the control plane of --kubeconfig and --context.
func liveLister(o *convertOptions) (convert.Lister, error) {
	cfg, err := kubeconfig.Loader{Cluster: "Karmada control plane", KubeconfigFlag: "--kubeconfig", ContextFlag: "--context",
		Kubeconfig: o.kubeconfig, Context: o.context, Default: clientcmd.RecommendedHomeFile,
		Fix: "pass --kubeconfig"}.Load()
	if err != nil {
		return nil, err
	}
	return convert.NewLister(cfg)
}

// errIncomplete is returned when something was not converted: the output
// and the report are written all the same.
var errIncomplete = errors.New("some objects were not converted: see the report")

func (o *convertOptions) run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	live := o.kubeconfig != "" || o.context != ""
	if len(o.files) == 0 && !live {
		return errors.New("nothing to convert: pass -f FILE (or - for standard input), or --kubeconfig of a Karmada control plane")
	}
	if o.reportFormat != "text" && o.reportFormat != "json" {
		return fmt.Errorf("--report-format %q: use text or json", o.reportFormat)
	}
	docs, entries := convert.ReadPaths(o.files, o.recursive, stdin)
	if live {
		l, err := o.newLister(o)
		if err != nil {
			return err
		}
		d, e := convert.ReadLive(ctx, l)
		docs, entries = append(docs, d...), append(entries, e...)
	}
	objs, report := convert.ConvertWith(convert.Options{TakeOverFromKarmada: o.takeOver}, docs, entries...)
	if o.outputDir != "" {
		files, err := convert.WriteDir(o.outputDir, objs)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stderr, "wrote %d file(s) to %s\n", len(files), o.outputDir)
	} else if err := convert.WriteYAML(stdout, objs); err != nil {
		return err
	}
	if err := o.writeReport(report, stderr); err != nil {
		return err
	}
	if report.Incomplete() {
		return errIncomplete
	}
	return nil
}

func (o *convertOptions) writeReport(r *convert.Report, stderr io.Writer) error {
	w := stderr
	if o.report != "" {
		f, err := os.Create(o.report)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		w = f
	}
	if o.reportFormat == "json" {
		return r.WriteJSON(w)
	}
	return r.WriteText(w)
}
