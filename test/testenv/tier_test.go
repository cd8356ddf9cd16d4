package testenv

import (
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestStartRefusesUnderShort: under -short, Start returns an error naming
// -short before it starts anything, whether or not this run is -short.
func TestStartRefusesUnderShort(t *testing.T) {
	was := flag.Lookup("test.short").Value.String()
	if err := flag.Set("test.short", "true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("test.short", was) })
	hub, err := Start(t.TempDir())
	if hub != nil {
		_ = hub.Stop()
		t.Fatal("Start started a hub under -short")
	}
	if !errors.Is(err, ErrShort) || !strings.Contains(err.Error(), "-short") {
		t.Fatalf("error %v, want ErrShort naming -short", err)
	}
}
