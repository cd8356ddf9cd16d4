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
// (their informational chatter only at -v 2 and above), and makes log
// controller-runtime's root logger, which client-go reaches through the
// contexts of controller-runtime's requests.
func redirectKlog(log logr.Logger) {
	controlplane.RedirectKlog(log.WithName("k8s"))
	ctrllog.SetLogger(log)
}
