// Package logging is how Shepherd's commands log: one structured logger
// (klog's text format) that klog (client-go's and the embedded Kubernetes
// components' logs) and controller-runtime are routed into, with their
// chatter demoted. It sits below everything that logs and links nothing
// heavier than klog and controller-runtime's log package, so the lean
// component binaries use it too.
package logging

import (
	"context"
	"errors"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// klogInfoDemotion is how many verbosity levels kube-apiserver's klog info
// messages are pushed down by RedirectKlog. The apiserver logs hundreds of
// V(0) lines on every start (post-start hooks, storage, RBAC
// reconciliation), which are noise for a hub user.
const klogInfoDemotion = 2

// RedirectKlog sends all klog output — which is how the embedded
// kube-apiserver logs — to l, with informational messages demoted by two
// verbosity levels (l.V(2)) and errors passed through as errors.
//
// klog is process-global, so this is opt-in and should be called at most
// once, early, from main or TestMain; controlplane.Start never changes
// logging. Without
// it the apiserver logs to stderr in klog's text format.
func RedirectKlog(l logr.Logger) {
	if l.GetSink() == nil { // logr.Discard()
		klog.SetLogger(l)
		return
	}
	klog.SetLogger(Demote(l, klogInfoDemotion))
}

// Demote returns l with informational messages pushed down by levels
// (errors are unchanged). Unlike l.V(levels), the demotion lives in the
// sink, so it survives APIs that keep only a logger's sink, such as
// controller-runtime's log.SetLogger.
func Demote(l logr.Logger, levels int) logr.Logger {
	if l.GetSink() == nil || levels <= 0 {
		return l
	}
	return logr.New(demotingSink{LogSink: l.GetSink(), by: levels})
}

// demotingSink shifts Info levels down by a fixed amount.
type demotingSink struct {
	logr.LogSink
	by int
}

func (s demotingSink) Enabled(level int) bool { return s.LogSink.Enabled(level + s.by) }

func (s demotingSink) Info(level int, msg string, kv ...any) {
	s.LogSink.Info(level+s.by, msg, kv...)
}

func (s demotingSink) WithValues(kv ...any) logr.LogSink {
	return demotingSink{LogSink: s.LogSink.WithValues(kv...), by: s.by}
}

func (s demotingSink) WithName(name string) logr.LogSink {
	return demotingSink{LogSink: s.LogSink.WithName(name), by: s.by}
}

// ErrorsAsInfo returns l with error messages logged as informational ones
// at level (the error under the key "err"). `shepherd up` uses it for the
// embedded components' klog output: on a clean start they report as
// errors conditions an embedded control plane expects (endpoints left by a
// previous run, a namespace not created yet, an OpenAPI fetch while the
// server warms up), which a newcomer reads as failures. A real failure
// still stops the fleet with Shepherd's own error.
func ErrorsAsInfo(l logr.Logger, level int) logr.Logger {
	return errorsAsInfo(l, level, nil)
}

// CanceledAsInfo returns l with the errors that are a context's end
// (context.Canceled) logged as informational ones at level, and every
// other error as an error. A reconcile or request cut off because its
// process is stopping is how stopping looks, not a failure:
// controller-runtime reports each as a "Reconciler error", twenty or so
// when a fleet stops. A deadline that ran out is still an error.
func CanceledAsInfo(l logr.Logger, level int) logr.Logger {
	return errorsAsInfo(l, level, func(err error) bool { return errors.Is(err, context.Canceled) })
}

func errorsAsInfo(l logr.Logger, level int, only func(error) bool) logr.Logger {
	if l.GetSink() == nil {
		return l
	}
	return logr.New(infoErrorSink{LogSink: l.GetSink(), level: level, only: only})
}

// infoErrorSink logs Error as Info at a fixed level: every error, or those
// only (when set) passes.
type infoErrorSink struct {
	logr.LogSink
	level int
	only  func(error) bool
}

func (s infoErrorSink) Error(err error, msg string, kv ...any) {
	if s.only != nil && !s.only(err) {
		s.LogSink.Error(err, msg, kv...)
		return
	}
	if s.LogSink.Enabled(s.level) {
		s.LogSink.Info(s.level, msg, append(kv, "err", err)...)
	}
}

func (s infoErrorSink) WithValues(kv ...any) logr.LogSink {
	return infoErrorSink{LogSink: s.LogSink.WithValues(kv...), level: s.level, only: s.only}
}

func (s infoErrorSink) WithName(name string) logr.LogSink {
	return infoErrorSink{LogSink: s.LogSink.WithName(name), level: s.level, only: s.only}
}

// New returns a structured (klog text format) logger writing to w at the
// given verbosity.
func New(w io.Writer, verbosity int) logr.Logger {
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity), textlogger.Output(w)))
}

// Route sends klog output (client-go's, and the embedded Kubernetes
// components') to log (their informational chatter only at -v 2 and
// above), and makes log, with informational messages demoted by
// ctrlDemotion levels, controller-runtime's root logger: the controllers'
// own logs and controller-runtime's, which client-go also reaches through
// the contexts of controller-runtime's requests. Commands that print to a
// terminal demote them by one (a decision per binding is too much; -v 1
// shows them), the controller manager and the agent by none.
func Route(log logr.Logger, ctrlDemotion int) {
	RedirectKlog(log.WithName("k8s"))
	ctrllog.SetLogger(Demote(log, ctrlDemotion))
}

// RouteQuietly is Route for `shepherd up`: the embedded components' errors
// too are shown only at -v 1 and above (ErrorsAsInfo), and so are
// Shepherd's own informational messages (the returned logger, for the
// fleet): a clean start prints the banner, the fleet's URLs and Shepherd's
// own errors and warnings, nothing else.
func RouteQuietly(log logr.Logger) logr.Logger {
	RedirectKlog(ErrorsAsInfo(log.WithName("k8s"), 1))
	quiet := Demote(log, 1)
	ctrllog.SetLogger(quiet)
	return quiet
}
