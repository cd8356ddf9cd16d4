package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParsePackageLine(t *testing.T) {
	for _, tt := range []struct {
		line string
		want pkgTime
		ok   bool
	}{
		{"ok  \tgithub.com/shepherd-io/shepherd/test/e2e\t386.462s", pkgTime{"github.com/shepherd-io/shepherd/test/e2e", 386462 * time.Millisecond, true}, true},
		{"FAIL\tgithub.com/shepherd-io/shepherd/pkg/cli\t95.169s", pkgTime{"github.com/shepherd-io/shepherd/pkg/cli", 95169 * time.Millisecond, false}, true},
		{"ok  \tgithub.com/shepherd-io/shepherd/pkg/names\t0.007s\tcoverage: 80.0% of statements", pkgTime{"github.com/shepherd-io/shepherd/pkg/names", 7 * time.Millisecond, true}, true},
		{"ok  \tgithub.com/shepherd-io/shepherd/pkg/names\t(cached)", pkgTime{}, false},
		{"?   \tgithub.com/shepherd-io/shepherd/test/testenv\t[no test files]", pkgTime{}, false},
		{"--- FAIL: TestX (1.00s)", pkgTime{}, false},
		{"FAIL", pkgTime{}, false},
		{"    ok  \tindented\t1s", pkgTime{}, false},
	} {
		got, ok := parsePackageLine(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%q: got %+v %v, want %+v %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// TestTimingsThroughTheWriter: lines split across writes are still read,
// and the summary lists the slowest first with ties by path.
func TestTimingsThroughTheWriter(t *testing.T) {
	tm := newTimings()
	out := "=== RUN TestA\nok  \tp/a\t1.5s\nFAIL\tp/b\t3.0s\nok  \tp/c\t3.0s\n?   \tp/d\t[no test files]\n"
	for i := 0; i < len(out); i += 7 { // arbitrary chunks
		if _, err := tm.Write([]byte(out[i:min(i+7, len(out))])); err != nil {
			t.Fatal(err)
		}
	}
	pkgs := tm.close()
	if len(pkgs) != 3 {
		t.Fatalf("read %d packages, want 3: %+v", len(pkgs), pkgs)
	}
	s := summary(pkgs, 10*time.Minute, 2)
	want := []string{"the 2 slowest of 3 packages", "3.0s  p/b  FAIL\n", "3.0s  p/c\n", "tests 8s in all", fmt.Sprintf("took 10m0s of CI's %s budget", Budget)}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("summary lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "p/a") {
		t.Errorf("the summary lists more than the top 2:\n%s", s)
	}
	if strings.Index(s, "p/b") > strings.Index(s, "p/c") {
		t.Errorf("a tie is not broken by import path:\n%s", s)
	}
}
