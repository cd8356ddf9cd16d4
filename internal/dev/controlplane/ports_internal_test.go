package controlplane

import (
	"net"
	"testing"
	"time"
)

func TestParsePortRange(t *testing.T) {
	for _, tc := range []struct {
		in      string
		lo, hi  int
		wantErr bool
	}{
		{in: "32768\t60999\n", lo: 32768, hi: 60999},
		{in: "1024 65535", lo: 1024, hi: 65535},
		{in: "", wantErr: true},
		{in: "32768", wantErr: true},
		{in: "a 60999", wantErr: true},
		{in: "32768 b", wantErr: true},
		{in: "60999 32768", wantErr: true},
		{in: "0 100", wantErr: true},
		{in: "100 70000", wantErr: true},
	} {
		lo, hi, err := parsePortRange(tc.in)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%q: got %d-%d, want an error", tc.in, lo, hi)
			}
			continue
		}
		if err != nil || lo != tc.lo || hi != tc.hi {
			t.Errorf("%q: got %d-%d, %v; want %d-%d", tc.in, lo, hi, err, tc.lo, tc.hi)
		}
	}
}

// TestOutsideRange: every pick is at or above the floor, at most 65535,
// and never in the ephemeral range; every such port can be picked.
func TestOutsideRange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi int
		// count is how many ports lie outside [lo, hi] from the floor up.
		count int
	}{
		{name: "Linux's default", lo: 32768, hi: 60999, count: (32768 - stablePortFloor) + (65535 - 60999)},
		{name: "range up to the top", lo: 20000, hi: 65535, count: 20000 - stablePortFloor},
		{name: "range from below the floor", lo: 1024, hi: 50000, count: 65535 - 50000},
		{name: "everything ephemeral", lo: 1024, hi: 65535, count: 0},
		{name: "range below the floor", lo: 1024, hi: 5000, count: 65536 - stablePortFloor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[int]bool{}
			for n := range tc.count + 10 {
				p, ok := outsideRange(tc.lo, tc.hi, n)
				if tc.count == 0 {
					if ok {
						t.Fatalf("picked %d with no port outside %d-%d", p, tc.lo, tc.hi)
					}
					return
				}
				if !ok || p < stablePortFloor || p > 65535 || (p >= tc.lo && p <= tc.hi) {
					t.Fatalf("n=%d: picked %d (ok %v), outside %d-%d and from %d wanted", n, p, ok, tc.lo, tc.hi, stablePortFloor)
				}
				seen[p] = true
			}
			if len(seen) != tc.count {
				t.Errorf("%d distinct ports picked, want all %d", len(seen), tc.count)
			}
		})
	}
}

// TestListenStable: the port picked lies outside the machine's ephemeral
// range, so no outgoing connection takes it while a control plane is
// restarted in place.
func TestListenStable(t *testing.T) {
	lo, hi := ephemeralRange()
	ln, err := listenStable("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := ln.Addr().(*net.TCPAddr).Port
	if _, ok := outsideRange(lo, hi, 0); ok && p >= lo && p <= hi {
		t.Errorf("port %d is in the ephemeral range %d-%d", p, lo, hi)
	}
}

// TestListenAPIServerWaitsForItsPort: a restart in place finds the port
// still held by the apiserver winding down; it listens once that lets go.
func TestListenAPIServerWaitsForItsPort(t *testing.T) {
	held, err := listenStable("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	port := held.Addr().(*net.TCPAddr).Port
	go func() {
		time.Sleep(500 * time.Millisecond)
		held.Close()
	}()
	ln, err := listenAPIServer("127.0.0.1", port)
	if err != nil {
		t.Fatalf("port %d, released after 500 ms: %v", port, err)
	}
	ln.Close()
}
