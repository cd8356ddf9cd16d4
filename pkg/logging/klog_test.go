package logging_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/shepherd-io/shepherd/pkg/logging"
)

func TestDemote(t *testing.T) {
	cases := []struct {
		name      string
		verbosity int
		by        int
		// logged at V(0), V(1) and as an error
		want []string
	}{
		{"not demoted", 0, 0, []string{"v0", "err"}},
		{"demoted by one hides V(0) at -v 0", 0, 1, []string{"err"}},
		{"demoted by one shows V(0) at -v 1", 1, 1, []string{"v0", "err"}},
		{"demoted by two at -v 2", 2, 2, []string{"v0", "err"}},
		{"negative demotion is none", 0, -1, []string{"v0", "err"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			l := funcr.New(func(_, args string) {
				for _, m := range []string{"v0", "v1", "err"} {
					if strings.Contains(args, `"msg"="`+m+`"`) {
						got = append(got, m)
					}
				}
			}, funcr.Options{Verbosity: tc.verbosity})
			d := logging.Demote(l, tc.by).WithName("x").WithValues("k", "v")
			d.Info("v0")
			d.V(1).Info("v1")
			d.Error(nil, "err")
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("logged %v, want %v", got, tc.want)
			}
		})
	}
}

func TestErrorsAsInfo(t *testing.T) {
	cases := []struct {
		name      string
		verbosity int
		level     int
		// what was logged: "info:MSG" or "error:MSG"
		want []string
	}{
		{"an error at V(1) is hidden at -v 0", 0, 1, []string{"info:v0"}},
		{"an error at V(1) shows as info at -v 1", 1, 1, []string{"info:v0", "info:v1", "info:boom"}},
		{"an error at V(0) always shows, as info", 0, 0, []string{"info:v0", "info:boom"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			l := funcr.New(func(_, args string) {
				kind := "info"
				if strings.Contains(args, `"error"=`) {
					kind = "error"
				}
				for _, m := range []string{"v0", "v1", "boom"} {
					if strings.Contains(args, `"msg"="`+m+`"`) {
						got = append(got, kind+":"+m)
					}
				}
				if strings.Contains(args, `"msg"="boom"`) && !strings.Contains(args, `"err"="`) {
					t.Errorf("the error is not carried: %s", args)
				}
			}, funcr.Options{Verbosity: tc.verbosity})
			d := logging.ErrorsAsInfo(l, tc.level).WithName("x").WithValues("k", "v")
			d.Info("v0")
			d.V(1).Info("v1")
			d.Error(errors.New("disk on fire"), "boom")
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("logged %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCanceledAsInfo(t *testing.T) {
	cases := []struct {
		name string
		err  error
		// what was logged at -v 0 and at -v 1: "info" or "error", or
		// "" for nothing
		v0, v1 string
	}{
		{"a context's end, wrapped: info at V(1)", fmt.Errorf("listing: %w", context.Canceled), "", "info"},
		{"a deadline that ran out: an error", fmt.Errorf("listing: %w", context.DeadlineExceeded), "error", "error"},
		{"another error: an error", errors.New("disk on fire"), "error", "error"},
	}
	for _, tc := range cases {
		for verbosity, want := range []string{tc.v0, tc.v1} {
			t.Run(fmt.Sprintf("%s at -v %d", tc.name, verbosity), func(t *testing.T) {
				got := ""
				l := funcr.New(func(_, args string) {
					got = "info"
					if strings.Contains(args, `"error"=`) {
						got = "error"
					}
				}, funcr.Options{Verbosity: verbosity})
				logging.CanceledAsInfo(l, 1).WithName("x").WithValues("k", "v").Error(tc.err, "Reconciler error")
				if got != want {
					t.Errorf("logged %q, want %q", got, want)
				}
			})
		}
	}
}
