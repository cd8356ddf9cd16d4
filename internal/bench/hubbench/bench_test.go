package hubbench

import (
	"context"
	"testing"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// A small run through a real embedded hub: every case writes every object
// (a write the API server refused would fail the run), the pipeline's
// cases are compared with a floor case, and the stored objects are read
// back. Numbers are not asserted: they are the benchmark's output.
func TestRunMeasuresEveryCase(t *testing.T) {
	testenv.Heavy(t)
	rep, err := Run(context.Background(), Options{DataDir: t.TempDir(), Objects: 20, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 15 {
		t.Fatalf("%d cases, want 15", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		if c.Writes != 20 || c.Seconds <= 0 || c.Bytes == 0 || c.ManagedFields == 0 {
			t.Errorf("%s: %+v", c.Name, c)
		}
		if c.Floor != "" && c.RatioToFloor <= 0 {
			t.Errorf("%s: no ratio to %q", c.Name, c.Floor)
		}
	}
}
