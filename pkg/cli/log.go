package cli

import (
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/textlogger"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/shepherd-io/shepherd/pkg/controlplane"
)

// newLogger returns a structured (klog text format) logger writing to w at
// the given verbosity.
func newLogger(w io.Writer, verbosity int) logr.Logger {
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity), textlogger.Output(w)))
}

// redirectKlog sends the embedded Kubernetes components' klog output to log
// (their informational chatter only at -v 2 and above), and makes log,
// with informational messages demoted by ctrlDemotion levels,
// controller-runtime's root logger: the controllers' own logs and
// controller-runtime's, which client-go also reaches through the contexts
// of controller-runtime's requests. `shepherd up` demotes them by one (a
// decision per binding is too much for a terminal; -v 1 shows them), the
// controller manager by none.
func redirectKlog(log logr.Logger, ctrlDemotion int) {
	controlplane.RedirectKlog(log.WithName("k8s"))
	ctrllog.SetLogger(controlplane.Demote(log, ctrlDemotion))
}

// redirectKlogQuietly is redirectKlog for `shepherd up`: the embedded
// components' errors too are shown only at -v 1 and above
// (controlplane.ErrorsAsInfo), and so are Shepherd's own informational
// messages (the returned logger, for the fleet): a clean start prints the
// banner, the fleet's URLs and Shepherd's own errors and warnings, nothing
// else.
func redirectKlogQuietly(log logr.Logger) logr.Logger {
	controlplane.RedirectKlog(controlplane.ErrorsAsInfo(log.WithName("k8s"), 1))
	quiet := controlplane.Demote(log, 1)
	ctrllog.SetLogger(quiet)
	return quiet
}
