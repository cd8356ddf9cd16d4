package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
)

// TestPrintServicesBenchWrites: the writes per change are printed in all,
// and net of the idle rate only when that rate was measured at rest.
func TestPrintServicesBenchWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  fleetbench.ServicesReport
		want string
	}{
		{"settled", fleetbench.ServicesReport{HubWritesPerChangeGross: 56.2, MemberWritesPerChangeGross: 21, HubWritesPerChange: 54.1, MemberWritesPerChange: 20.5,
			IdleSettled: true, IdleWindowSeconds: 10, SettleSeconds: 30},
			"net of the idle rate (10 s, after 30 s to settle): hub 54.1, members 20.5"},
		{"never settled", fleetbench.ServicesReport{HubWritesPerChangeGross: 56.2, MemberWritesPerChangeGross: 21, SettleSeconds: 170, IdleWindowSeconds: 10},
			"not measured (the write rate was still falling after 180 s of waiting)"},
		{"busier at rest", fleetbench.ServicesReport{HubWritesPerChangeGross: 3, MemberWritesPerChangeGross: 21, HubWritesPerChange: -2, MemberWritesPerChange: 20,
			IdleSettled: true, IdleWindowSeconds: 10},
			"not measurable (the fleet wrote more at rest than during the changes)"},
		{"what the fleet writes at rest", fleetbench.ServicesReport{IdleSettled: true, IdleWindowSeconds: 10,
			IdleWrites: []fleetbench.RequestRate{{Verb: "PATCH", Resource: "works", Subresource: "status", PerWorkload: 1.5}}},
			"writes at rest (the 10 s idle window):\nVERB   RESOURCE      PER SECOND\nPATCH  works/status  1.50"},
		{"which controllers are busy at rest", fleetbench.ServicesReport{IdleSettled: true, IdleWindowSeconds: 10,
			IdleReconciles: []fleetbench.ReconcileCount{{Controller: "work-status", Total: 387}, {Controller: "execution", Total: 5}}},
			"reconciles at rest, by controller (the same window):\nCONTROLLER   PER SECOND\nwork-status  38.70\nexecution    0.50"},
	} {
		var out bytes.Buffer
		if err := printServicesBench(&out, &tc.rep); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(out.String(), "writes per change: hub ") || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: output lacks %q:\n%s", tc.name, tc.want, out.String())
		}
	}
}
