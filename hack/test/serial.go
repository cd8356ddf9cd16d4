package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The integration and end-to-end packages each run several
// kube-apiservers: two of them at once on a two-core machine make
// load-sensitive waits fail now and then. So `go test` runs every test
// binary through this command (-exec), which runs those binaries one at a
// time, machine wide, by a lock; meanwhile `go test -p N` compiles and
// links the next packages, which used to wait for the tests before them.
//
// A binary takes the lock when it can start a control plane (it links
// controlplane.Start) or its package builds binaries of its own
// (exclusivePackages); it is read from the binary's function table, and a
// binary that cannot be read takes the lock. Every other binary (unit
// tests, most of the packages) runs at once, beside whichever holds it:
// it would otherwise wait, with its slot of -p, for an end-to-end suite.
//
// The time `go test` prints for a package then includes the wait for the
// lock, so each binary's own time is written to a file and the summary
// reads it from there.

// Environment of the serial mode: the lock's path and the times file's.
// Both are set by main for `go test` and never reach the tests.
const (
	lockEnv  = "SHEPHERD_HACK_TEST_LOCK"
	timesEnv = "SHEPHERD_HACK_TEST_TIMES"
)

// serialArgs returns go test's arguments with the -exec that runs the
// binaries one at a time through this program, and the environment that
// turns the serial mode on. ok is false when the user gave an -exec of
// their own.
func serialArgs(args []string, self, dir string) (out, env []string, ok bool) {
	for _, a := range args {
		if a == "-exec" || strings.HasPrefix(a, "-exec=") || a == "--exec" || strings.HasPrefix(a, "--exec=") {
			return args, nil, false
		}
	}
	out = append([]string{"-exec", self}, args...)
	env = []string{lockEnv + "=" + filepath.Join(dir, "lock"), timesEnv + "=" + filepath.Join(dir, "times")}
	return out, env, true
}

// controlPlaneStart is the symbol of a binary that can start a control
// plane (every kube-apiserver of the tests starts there).
const controlPlaneStart = "github.com/shepherd-io/shepherd/internal/dev/controlplane.Start"

// exclusivePackages start no control plane but load both cores for
// minutes: they build Shepherd's binaries (images, generated files), and
// on a cold build cache hack/image recompiles every dependency (its
// -trimpath, CGO_ENABLED=0 builds share nothing with go test's).
var exclusivePackages = []string{
	"github.com/shepherd-io/shepherd/hack/image",
	"github.com/shepherd-io/shepherd/hack/verify",
}

// exclusive says whether the test binary of pkg runs alone (see above).
func exclusive(binary, pkg string) bool {
	if slices.Contains(exclusivePackages, pkg) {
		return true
	}
	linked, err := linksSymbol(binary, controlPlaneStart)
	return err != nil || linked
}

// linksSymbol reports whether the ELF binary has the function sym: its
// name, NUL-terminated, in the function name table of .gopclntab, which
// the runtime needs, so that go test's stripped binaries keep it too.
func linksSymbol(binary, sym string) (bool, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sec := f.Section(".gopclntab")
	if sec == nil {
		return false, fmt.Errorf("%s has no .gopclntab section", binary)
	}
	data, err := sec.Data()
	if err != nil {
		return false, err
	}
	return bytes.Contains(data, append([]byte(sym), 0)), nil
}

// runSerialized runs the test binary of pkg (args), once it holds the
// lock when alone is set, passing signals on, and records its time under
// pkg (none when pkg is empty); it returns the binary's exit code.
func runSerialized(lockPath, timesPath, pkg string, args []string, alone bool) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "test: serial mode without a test binary to run")
		return 2
	}
	if alone {
		lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "test:", err)
			return 2
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			fmt.Fprintln(os.Stderr, "test: taking the lock:", err)
			return 2
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, lockEnv+"=") || strings.HasPrefix(kv, timesEnv+"=")
	})
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT)
	started := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
		return 2
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	took := time.Since(started)
	if pkg != "" {
		recordTime(timesPath, pkg, took)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "test:", err)
		return 2
	}
}

// importPath is the import path of the package in dir (go test runs a
// binary in its package's directory), from the go.mod above it.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for root := abs; ; root = filepath.Dir(root) {
		if data, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
			mod := modulePath(string(data))
			if mod == "" {
				return "", fmt.Errorf("%s/go.mod names no module", root)
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil || rel == "." {
				return mod, err
			}
			return mod + "/" + filepath.ToSlash(rel), nil
		}
		if filepath.Dir(root) == root {
			return "", fmt.Errorf("no go.mod above %s", abs)
		}
	}
}

// modulePath is the module line's path of a go.mod.
func modulePath(gomod string) string {
	for line := range strings.Lines(gomod) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// recordTime appends "PKG\tSECONDS" to the times file in one short
// append (O_APPEND: lines of binaries that end together do not mix).
func recordTime(path, pkg string, took time.Duration) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "%s\t%.3f\n", pkg, took.Seconds())
}

// readTimes reads the times file: each package's own time.
func readTimes(path string) map[string]time.Duration {
	out := map[string]time.Duration{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pkg, secs, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		s, err := strconv.ParseFloat(secs, 64)
		if err != nil {
			continue
		}
		// A package run twice (-count or several patterns) adds up.
		out[pkg] += time.Duration(s * float64(time.Second))
	}
	return out
}

// ownTimes replaces the time go test printed for each package by its
// binary's own, where the serial mode measured one.
func ownTimes(pkgs []pkgTime, own map[string]time.Duration) []pkgTime {
	out := slices.Clone(pkgs)
	for i, p := range out {
		if d, ok := own[p.pkg]; ok {
			out[i].took = d
		}
	}
	return out
}
