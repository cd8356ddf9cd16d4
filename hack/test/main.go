// Command test runs every test of the repository on a machine that has Go
// and nothing else: it installs what the suites need that Go does not
// bring, then runs `go test` with its arguments (default ./...).
//
// The only such need is Chromium, for the dashboard's browser tests
// (test/browser). When no Chromium is found ($CHROMIUM, chromium,
// chromium-browser or google-chrome on the PATH) and the system has
// apt-get, it installs Debian's chromium package, as root or through sudo.
// Elsewhere it says what to install and goes on: the browser suite then
// fails naming it.
//
//	go run ./hack/test                 # go test ./...
//	go run ./hack/test -short ./pkg/... # any go test arguments
//
// Test binaries that start control planes run one at a time, whatever -p
// says (-p sets how many packages are built and tested at once): see
// serial.go.
//
// At the end it prints the slowest packages and the time taken against
// CI's budget (Budget).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/shepherd-io/shepherd/test/browserenv"
)

func main() {
	if lock := os.Getenv(lockEnv); lock != "" {
		// Run by go test (-exec) to run one test binary: see serial.go.
		pkg, _ := importPath(".") // go test runs a binary in its package's directory
		alone := len(os.Args) < 2 || exclusive(os.Args[1], pkg)
		os.Exit(runSerialized(lock, os.Getenv(timesEnv), pkg, os.Args[1:], alone))
	}
	if err := ensureChromium(); err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
	}
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"./..."}
	}
	env := os.Environ()
	timesPath := ""
	if self, err := os.Executable(); err == nil {
		if dir, err := os.MkdirTemp("", "shepherd-test-"); err == nil {
			defer os.RemoveAll(dir)
			var serial []string
			var ok bool
			if args, serial, ok = serialArgs(args, self, dir); ok {
				env = append(env, serial...)
				timesPath = filepath.Join(dir, "times")
			}
		}
	}
	cmd := exec.Command("go", append([]string{"test"}, args...)...)
	cmd.Env = env
	times := newTimings()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, io.MultiWriter(os.Stdout, times), os.Stderr
	started := time.Now()
	err := cmd.Run()
	pkgs := times.close()
	if timesPath != "" {
		pkgs = ownTimes(pkgs, readTimes(timesPath))
	}
	fmt.Print(summary(pkgs, time.Since(started), 25))
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "test:", err)
		os.Exit(1)
	}
}

// ensureChromium installs Debian's chromium when no Chromium is found.
func ensureChromium() error {
	if p, err := browserenv.Chromium(); err == nil {
		fmt.Println("test: Chromium for the browser tests:", p)
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return errors.New("no Chromium found and no apt-get to install it: install Chromium (or set $CHROMIUM) for the browser tests")
	}
	var prefix []string
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("sudo"); err != nil {
			return errors.New("no Chromium found: install it as root (apt-get install chromium) or set $CHROMIUM")
		}
		prefix = []string{"sudo", "-n"}
	}
	started := time.Now()
	fmt.Println("test: installing Chromium for the browser tests (apt-get install chromium)")
	for _, args := range [][]string{{"apt-get", "update", "-qq"}, {"apt-get", "install", "-y", "-qq", "chromium"}} {
		args = append(prefix, args...)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%v: %w; install Chromium yourself (or set $CHROMIUM) for the browser tests", args, err)
		}
	}
	fmt.Printf("test: Chromium installed in %s\n", time.Since(started).Round(time.Second))
	return nil
}
