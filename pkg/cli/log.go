package cli

import (
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/textlogger"
)

// newLogger returns a structured (klog text format) logger writing to w at
// the given verbosity.
func newLogger(w io.Writer, verbosity int) logr.Logger {
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity), textlogger.Output(w)))
}
