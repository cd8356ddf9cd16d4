package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// Budget is how long CI's whole run (.ci/run on a fresh clone, two cores)
// may take. The test command reports each package's time against it, so a
// new suite shows what it costs and where the time goes.
const Budget = 30 * time.Minute

// pkgTime is one package's line of `go test` output: its import path,
// how long its tests ran, and whether they passed.
type pkgTime struct {
	pkg    string
	took   time.Duration
	passed bool
}

// parsePackageLine reads a package's summary line of `go test`:
// "ok  \tPKG\t12.3s", "FAIL\tPKG\t4.5s", "ok  \tPKG\t(cached)" (no time).
func parsePackageLine(line string) (pkgTime, bool) {
	fields := strings.Split(line, "\t")
	if len(fields) < 3 {
		return pkgTime{}, false
	}
	status := strings.TrimRight(fields[0], " ")
	if status != "ok" && status != "FAIL" {
		return pkgTime{}, false
	}
	took, err := time.ParseDuration(strings.Fields(fields[2])[0])
	if err != nil {
		return pkgTime{}, false
	}
	return pkgTime{pkg: fields[1], took: took, passed: status == "ok"}, true
}

// timings collects the package lines of the output written through it.
type timings struct {
	mu   sync.Mutex
	pkgs []pkgTime
	pw   *io.PipeWriter
	done chan struct{}
}

func newTimings() *timings {
	pr, pw := io.Pipe()
	t := &timings{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			if p, ok := parsePackageLine(sc.Text()); ok {
				t.mu.Lock()
				t.pkgs = append(t.pkgs, p)
				t.mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, pr) // a line past the buffer: keep draining
	}()
	return t
}

func (t *timings) Write(p []byte) (int, error) { return t.pw.Write(p) }

// close ends the collection and returns the packages seen.
func (t *timings) close() []pkgTime {
	_ = t.pw.Close()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pkgs
}

// summary lists the slowest packages, longest first (ties by import path),
// their sum, and the wall time against Budget.
func summary(pkgs []pkgTime, wall time.Duration, top int) string {
	sorted := slices.Clone(pkgs)
	slices.SortFunc(sorted, func(a, b pkgTime) int {
		if a.took != b.took {
			return int(b.took - a.took)
		}
		return strings.Compare(a.pkg, b.pkg)
	})
	var sum time.Duration
	for _, p := range sorted {
		sum += p.took
	}
	var b strings.Builder
	fmt.Fprintf(&b, "test: the %d slowest of %d packages (their tests' own time; building them is not counted):\n", min(top, len(sorted)), len(sorted))
	for _, p := range sorted[:min(top, len(sorted))] {
		mark := ""
		if !p.passed {
			mark = "  FAIL"
		}
		fmt.Fprintf(&b, "test: %8.1fs  %s%s\n", p.took.Seconds(), p.pkg, mark)
	}
	fmt.Fprintf(&b, "test: packages' tests %s in all; this command took %s of CI's %s budget (the rest of .ci/run comes on top)\n",
		sum.Round(time.Second), wall.Round(time.Second), Budget)
	return b.String()
}
