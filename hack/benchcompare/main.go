// Command benchcompare measures a change to the propagation path against
// an earlier revision, in one run on one machine: it builds the shepherd
// command of both (the earlier one from a temporary git worktree), runs
// `shepherd bench e2e` with the same arguments alternately, base then head,
// several times, and prints each figure's head/base ratio per pair with
// its median and spread. Alternating pairs keep a machine whose speed
// drifts from favouring either side. It is a benchmark, not a test: it
// asserts nothing.
//
//	go run ./hack/benchcompare                        # base: the merge base with main (HEAD~1 on main)
//	go run ./hack/benchcompare -base v0.3.0 -runs 5
//	go run ./hack/benchcompare -args "--members 3 --deployments 200 --policies 10"
//
// It refuses a base git cannot resolve and a working tree with uncommitted
// changes (commit them, or pass -allow-dirty), naming them. Interrupted, it
// stops the running fleet (SIGINT, which `bench e2e` cleans up after) and
// removes its worktree and binaries. docs/performance.md says when to run it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

func run() error {
	base := flag.String("base", "", "the earlier revision to compare with (default: the merge base with main, or HEAD~1 when that is HEAD)")
	runs := flag.Int("runs", 3, "alternating pairs of runs (base, head)")
	args := flag.String("args", "--members 20 --deployments 1000 --policies 10", "the arguments of `shepherd bench e2e` for both sides")
	allowDirty := flag.Bool("allow-dirty", false, "measure a working tree with uncommitted changes")
	keep := flag.String("out", "", "a directory to keep each run's JSON report in (default: none kept)")
	flag.Parse()
	if *runs < 1 {
		return fmt.Errorf("-runs %d: at least one pair is needed", *runs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if !*allowDirty {
		out, err := git("status", "--porcelain", "--untracked-files=no")
		if err != nil {
			return err
		}
		if dirty := strings.TrimSpace(out); dirty != "" {
			return fmt.Errorf("the working tree has uncommitted changes, so its build is not a revision anyone can measure again:\n%s\ncommit them, or pass -allow-dirty", dirty)
		}
	}
	rev, err := resolveBase(*base)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "benchcompare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	worktree := filepath.Join(tmp, "base")
	if _, err := git("worktree", "add", "--detach", worktree, rev); err != nil {
		return err
	}
	defer func() { _, _ = git("worktree", "remove", "--force", worktree) }()

	bins := map[string]string{"base": filepath.Join(tmp, "shepherd-base"), "head": filepath.Join(tmp, "shepherd-head")}
	for side, dir := range map[string]string{"base": worktree, "head": "."} {
		fmt.Fprintf(os.Stderr, "building %s (%s)\n", side, dir)
		build := exec.CommandContext(ctx, "go", "build", "-o", bins[side], "./cmd/shepherd")
		build.Dir, build.Stdout, build.Stderr = dir, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building %s: %w", side, err)
		}
	}
	benchArgs := append([]string{"bench", "e2e"}, strings.Fields(*args)...)
	benchArgs = append(benchArgs, "-o", "json")
	var pairs []pair
	for i := range *runs {
		var p pair
		for _, side := range []string{"base", "head"} {
			fmt.Fprintf(os.Stderr, "pair %d/%d: %s\n", i+1, *runs, side)
			r, raw, err := bench(ctx, bins[side], benchArgs)
			if err != nil {
				return fmt.Errorf("pair %d, %s: %w", i+1, side, err)
			}
			if *keep != "" {
				if err := os.MkdirAll(*keep, 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(*keep, fmt.Sprintf("%s-%d.json", side, i+1)), raw, 0o644); err != nil {
					return err
				}
			}
			if side == "base" {
				p.base = r
			} else {
				p.head = r
			}
		}
		pairs = append(pairs, p)
	}
	fmt.Printf("head %s against base %s (%s), %d alternating pairs of `shepherd bench e2e %s`\n",
		strings.TrimSpace(must(git("rev-parse", "--short", "HEAD"))), strings.TrimSpace(must(git("rev-parse", "--short", rev))), rev, len(pairs), *args)
	fmt.Print(table(pairs))
	return nil
}

// resolveBase is the commit to compare with: rev when given, else the
// merge base with main, or HEAD~1 when that is HEAD itself.
func resolveBase(rev string) (string, error) {
	if rev != "" {
		out, err := git("rev-parse", "--verify", "--quiet", rev+"^{commit}")
		if err != nil {
			return "", fmt.Errorf("-base %q is not a revision of this repository (git rev-parse: %v)", rev, err)
		}
		return strings.TrimSpace(out), nil
	}
	head := strings.TrimSpace(must(git("rev-parse", "HEAD")))
	mb, err := git("merge-base", "HEAD", "main")
	if err == nil && strings.TrimSpace(mb) != head {
		return strings.TrimSpace(mb), nil
	}
	out, err := git("rev-parse", "--verify", "--quiet", "HEAD~1^{commit}")
	if err != nil {
		return "", errors.New("no earlier revision to compare with: pass -base")
	}
	return strings.TrimSpace(out), nil
}

// bench runs one `shepherd bench e2e` and decodes its report. Interrupted,
// the run gets SIGINT, so that it stops its fleet and removes it.
func bench(ctx context.Context, bin string, args []string) (report, []byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Stderr = os.Stderr // the fleet's progress
	out, err := cmd.Output()
	if err != nil {
		return report{}, out, err
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		return report{}, out, fmt.Errorf("reading the report: %w", err)
	}
	return r, out, nil
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func must(s string, err error) string {
	if err != nil {
		return "?"
	}
	return s
}
