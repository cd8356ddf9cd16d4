package framework

import (
	"errors"
	"fmt"
	"strings"
)

// Code is the outcome of a plugin call.
type Code int

const (
	// Success: the cluster passes (Filter) or the call worked.
	Success Code = iota
	// Unschedulable: the cluster cannot take the workload. Filtering the
	// cluster out is a normal outcome, not an error.
	Unschedulable
	// Error: the plugin could not decide (bad input, internal failure); the
	// whole cycle fails rather than silently dropping clusters.
	Error
	// Skip: returned by PreFilter or PreScore when the plugin has nothing to
	// do for this workload, so the framework does not call it per cluster.
	// (kube-scheduler has the same code for the same reason.)
	Skip
)

var codeNames = [...]string{"Success", "Unschedulable", "Error", "Skip"}

func (c Code) String() string {
	if c < 0 || int(c) >= len(codeNames) {
		return "Unknown"
	}
	return codeNames[c]
}

// Status is the result of a plugin call. A nil *Status means Success.
//
// Statuses are immutable once returned: plugins return shared statuses built
// once per cycle (or once per process) so that filtering thousands of
// clusters allocates nothing per cluster, and the framework records which
// plugin returned a status next to it instead of writing into it.
type Status struct {
	code    Code
	reasons []string
	// one backs reasons when there is a single reason (the common case),
	// so a status is one allocation.
	one    [1]string
	plugin string
	err    error
}

// NewStatus returns a status with the code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	s := &Status{code: code}
	if len(reasons) == 1 {
		s.one[0] = reasons[0]
		s.reasons = s.one[:]
	} else {
		// Copy rather than keep the variadic slice, so it need not escape.
		s.reasons = append([]string(nil), reasons...)
	}
	return s
}

// AsStatus wraps an error into an Error status; nil gives nil.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	s := NewStatus(Error, err.Error())
	s.err = err
	return s
}

// Code returns the code; Success for a nil status.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess is true for a nil status or code Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip is true for code Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected is true for code Unschedulable.
func (s *Status) IsRejected() bool { return s.Code() == Unschedulable }

// Reasons returns the reasons.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	if len(s.reasons) == 1 {
		return s.reasons[0]
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin is the plugin the status is attributed to, when known.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin returns a copy attributed to plugin (statuses are shared, so
// the framework never writes into one).
func (s *Status) WithPlugin(plugin string) *Status {
	if s == nil {
		return nil
	}
	c := *s
	if len(s.reasons) == 1 {
		c.reasons = c.one[:]
	}
	c.plugin = plugin
	return &c
}

// AsError returns nil for Success and Skip, the wrapped error for statuses
// built by AsStatus, and an error carrying the message otherwise.
func (s *Status) AsError() error {
	switch s.Code() {
	case Success, Skip:
		return nil
	}
	switch {
	case s.err != nil && s.plugin != "":
		return fmt.Errorf("%s: %w", s.plugin, s.err)
	case s.err != nil:
		return s.err
	case s.plugin != "":
		return errors.New(s.plugin + ": " + s.Message())
	}
	return errors.New(s.Message())
}
