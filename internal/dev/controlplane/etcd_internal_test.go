package controlplane

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestEtcdLogLevels feeds etcd log entries through logrCore and checks which
// reach the logger as errors: a healthy start must log none.
func TestEtcdLogLevels(t *testing.T) {
	cases := []struct {
		name      string
		level     zapcore.Level
		message   string
		err       error
		closing   bool
		wantError bool
	}{
		{name: "an error is an error", level: zapcore.ErrorLevel, message: "failed to apply request", err: errors.New("disk full"), wantError: true},
		{name: "a fresh data dir's storage version retry is not",
			level: zapcore.ErrorLevel, message: "failed to update storage version",
			err: errors.New("cannot detect storage schema version: missing term information")},
		{name: "the same message with another cause is",
			level: zapcore.ErrorLevel, message: "failed to update storage version",
			err: errors.New("backend closed"), wantError: true},
		{name: "errors while closing are not", level: zapcore.ErrorLevel, message: "failed to apply request", err: errors.New("closed"), closing: true},
		{name: "a warning is not", level: zapcore.WarnLevel, message: "slow apply", err: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := &countingSink{}
			log := logr.New(sink)
			closing := new(atomic.Bool)
			closing.Store(tc.closing)
			z := zap.New(&logrCore{log: log, min: zapcore.WarnLevel, quiet: closing})
			fields := []zap.Field{}
			if tc.err != nil {
				fields = append(fields, zap.Error(tc.err))
			}
			if ce := z.Check(tc.level, tc.message); ce != nil {
				ce.Write(fields...)
			}
			if sink.errors+sink.infos != 1 {
				t.Fatalf("%d errors and %d infos logged, want one line", sink.errors, sink.infos)
			}
			if got := sink.errors == 1; got != tc.wantError {
				t.Errorf("logged as an error: %v, want %v", got, tc.wantError)
			}
		})
	}
}

// countingSink counts the lines logged at each level; every verbosity is on.
type countingSink struct{ errors, infos int }

func (s *countingSink) Init(logr.RuntimeInfo)          {}
func (s *countingSink) Enabled(int) bool               { return true }
func (s *countingSink) Info(int, string, ...any)       { s.infos++ }
func (s *countingSink) Error(error, string, ...any)    { s.errors++ }
func (s *countingSink) WithValues(...any) logr.LogSink { return s }
func (s *countingSink) WithName(string) logr.LogSink   { return s }

// TestEtcdVia: the API server's etcd URL keeps its scheme and path, with
// the address the route gives; a route that fails names etcd's address.
func TestEtcdVia(t *testing.T) {
	got, err := via("http://127.0.0.1:2379", func(addr string) (string, error) {
		if addr != "127.0.0.1:2379" {
			t.Errorf("route given %q", addr)
		}
		return "127.0.0.1:40000", nil
	})
	if err != nil || got != "http://127.0.0.1:40000" {
		t.Errorf("via = %q, %v", got, err)
	}
	_, err = via("http://127.0.0.1:2379", func(string) (string, error) { return "", errors.New("no proxy") })
	if err == nil || err.Error() != "routing the API server to etcd at 127.0.0.1:2379: no proxy" {
		t.Errorf("a failing route: %v", err)
	}
}
