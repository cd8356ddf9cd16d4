package controlplane

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A control plane restarted in place listens again on the port it had,
// the one its clients' kubeconfigs name. A port from the kernel's
// ephemeral range can be taken meanwhile by any outgoing connection on the
// machine, and the restart then fails with "address already in use". So
// a port the control plane picks itself comes from outside that range,
// where the kernel never hands out ports on its own; only a program that
// names the same port could take it, and a random pick makes that rare.

// stablePortFloor is the lowest port picked: below it sit the ports
// services are configured on by convention (8080, 5432, 6443, ...).
const stablePortFloor = 10000

// defaultEphemeral is Linux's default ip_local_port_range, used where the
// kernel's setting cannot be read.
var defaultEphemeral = [2]int{32768, 60999}

// ephemeralRange returns the kernel's ephemeral port range, inclusive.
func ephemeralRange() (lo, hi int) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeral[0], defaultEphemeral[1]
	}
	lo, hi, err = parsePortRange(string(data))
	if err != nil {
		return defaultEphemeral[0], defaultEphemeral[1]
	}
	return lo, hi
}

// parsePortRange reads ip_local_port_range's "low high".
func parsePortRange(s string) (lo, hi int, err error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("port range %q: want two numbers", s)
	}
	if lo, err = strconv.Atoi(f[0]); err != nil {
		return 0, 0, fmt.Errorf("port range %q: %w", s, err)
	}
	if hi, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, fmt.Errorf("port range %q: %w", s, err)
	}
	if lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("port range %q: want 1 <= low <= high <= 65535", s)
	}
	return lo, hi, nil
}

// outsideRange maps n (any non-negative number) onto the ports from
// stablePortFloor to 65535 that are not in [lo, hi]. ok is false when
// there is none.
func outsideRange(lo, hi, n int) (port int, ok bool) {
	below := max(0, lo-stablePortFloor) // stablePortFloor .. lo-1
	aboveFrom := max(hi+1, stablePortFloor)
	above := max(0, 65536-aboveFrom) // aboveFrom .. 65535
	if below+above == 0 {
		return 0, false
	}
	n %= below + above
	if n < below {
		return stablePortFloor + n, true
	}
	return aboveFrom + n - below, true
}

// listenStable listens on host at a free port outside the ephemeral
// range, falling back to any free port when none is found in a few tries.
func listenStable(host string) (net.Listener, error) {
	lo, hi := ephemeralRange()
	for range 32 {
		port, ok := outsideRange(lo, hi, rand.IntN(1<<30))
		if !ok {
			break
		}
		if ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
			return ln, nil
		}
	}
	return net.Listen("tcp", net.JoinHostPort(host, "0"))
}

// listenAPIServer listens for the API server: on port, or on a stable
// port it picks when port is 0. A given port still in use (the control
// plane restarted in place, its previous apiserver winding down) is
// tried again for up to portRetry.
func listenAPIServer(host string, port int) (net.Listener, error) {
	if port == 0 {
		return listenStable(host)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	deadline := time.Now().Add(portRetry)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// portRetry bounds the wait for a port still in use.
const portRetry = 10 * time.Second
