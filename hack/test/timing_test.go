package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

func TestSerialArgs(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		want   []string
		serial bool
	}{
		{args: []string{"-p", "2", "./..."}, want: []string{"-exec", "/bin/self", "-p", "2", "./..."}, serial: true},
		{args: []string{"-exec", "sudo", "./..."}, want: []string{"-exec", "sudo", "./..."}},
		{args: []string{"-exec=sudo", "./..."}, want: []string{"-exec=sudo", "./..."}},
	} {
		got, env, ok := serialArgs(tc.args, "/bin/self", "/tmp/d")
		if ok != tc.serial || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v: got %v (serial %v), want %v (serial %v)", tc.args, got, ok, tc.want, tc.serial)
		}
		if ok && (len(env) != 2 || env[0] != lockEnv+"=/tmp/d/lock" || env[1] != timesEnv+"=/tmp/d/times") {
			t.Errorf("%v: env %v", tc.args, env)
		}
	}
}

// TestOwnTimes: the times the binaries measured replace those go test
// printed (which include the wait for the lock); a package run twice adds
// up; a package without one keeps go test's.
func TestOwnTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "times")
	recordTime(path, "p/a", 1500*time.Millisecond)
	recordTime(path, "p/b", 2*time.Second)
	recordTime(path, "p/b", time.Second)
	if err := os.WriteFile(path+".bad", []byte("no tab\np/c\tnot-a-number\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readTimes(path + ".bad"); len(got) != 0 {
		t.Errorf("malformed lines read as %v", got)
	}
	got := ownTimes([]pkgTime{{"p/a", 9 * time.Second, true}, {"p/b", 9 * time.Second, false}, {"p/c", 4 * time.Second, true}}, readTimes(path))
	want := []pkgTime{{"p/a", 1500 * time.Millisecond, true}, {"p/b", 3 * time.Second, false}, {"p/c", 4 * time.Second, true}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestImportPath(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("// x\nmodule example.com/m\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{root: "example.com/m", sub: "example.com/m/a/b"} {
		if got, err := importPath(dir); err != nil || got != want {
			t.Errorf("importPath(%s) = %q, %v; want %q", dir, got, err, want)
		}
	}
	if _, err := importPath(filepath.Dir(root)); err == nil {
		t.Errorf("a directory with no go.mod above it has an import path")
	}
}

// TestRunSerialized: two binaries that run alone, started at once, run
// one after the other; two that need not, at once. Each exit code comes
// back, and each own time is recorded.
func TestRunSerialized(t *testing.T) {
	for _, tc := range []struct {
		alone bool
		log   string
	}{
		{true, "start\nend\nstart\nend\n"},
		{false, "start\nstart\nend\nend\n"},
	} {
		t.Run(fmt.Sprintf("alone=%v", tc.alone), func(t *testing.T) {
			dir := t.TempDir()
			lock, times, log := filepath.Join(dir, "lock"), filepath.Join(dir, "times"), filepath.Join(dir, "log")
			script := "echo start >> " + log + "; sleep 0.3; echo end >> " + log + "; exit $0"
			codes := make(chan int, 2)
			for _, code := range []string{"0", "3"} {
				go func() {
					codes <- runSerialized(lock, times, "github.com/shepherd-io/shepherd/hack/test", []string{"sh", "-c", script, code}, tc.alone)
				}()
			}
			got := []int{<-codes, <-codes}
			slices.Sort(got)
			if !slices.Equal(got, []int{0, 3}) {
				t.Errorf("exit codes %v, want 0 and 3", got)
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.log {
				t.Errorf("log:\n%s\nwant:\n%s", data, tc.log)
			}
			own := readTimes(times)
			if d := own["github.com/shepherd-io/shepherd/hack/test"]; d < 600*time.Millisecond {
				t.Errorf("recorded %v for this package, want the two runs' 0.6 s at least: %v", d, own)
			}
		})
	}
}

// TestExclusive: a binary is read for the control plane's symbol (this
// test binary has its own functions' symbols and not the control
// plane's); the packages that build binaries, and a binary that cannot
// be read, run alone.
func TestExclusive(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if linked, err := linksSymbol(self, "github.com/shepherd-io/shepherd/hack/test.linksSymbol"); err != nil || !linked {
		t.Fatalf("this binary's own symbol not found: %v, %v", linked, err)
	}
	notABinary := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notABinary, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		binary, pkg string
		want        bool
	}{
		{self, "github.com/shepherd-io/shepherd/hack/test", false},
		{self, "github.com/shepherd-io/shepherd/hack/image", true},
		{notABinary, "github.com/shepherd-io/shepherd/pkg/x", true},
		{filepath.Join(t.TempDir(), "missing"), "github.com/shepherd-io/shepherd/pkg/x", true},
	} {
		if got := exclusive(tc.binary, tc.pkg); got != tc.want {
			t.Errorf("exclusive(%s, %s) = %v, want %v", filepath.Base(tc.binary), tc.pkg, got, tc.want)
		}
	}
}
