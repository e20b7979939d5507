// Package ports hands out loopback TCP ports for the servers the tests
// start (a manager's webhook, metrics and probe ports, Prometheus, a
// database).
//
// A port the kernel picks for ":0" is in its ephemeral range
// (net.ipv4.ip_local_port_range, 32768–60999 by default), and between the
// probe's close and the server's own bind any outgoing connection on the
// machine may take it as its source port: a manager then fails with
// "address already in use". Ports below the ephemeral range are never given
// to outgoing connections, so Free hands those out, each once per process.
package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// low is the first port Free considers; the range ends below the ephemeral
// range's start and below kwokctlLow.
const low = 20000

// kwokctlLow is below every port kwokctl takes for a local cluster's
// components (it counts down from 32766, a few ports per cluster).
const kwokctlLow = 30000

var (
	mu    sync.Mutex
	given = map[int]bool{}
)

// ephemeralStart is where the kernel's ephemeral range begins.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// Free returns a loopback TCP port that nothing listens on, below the
// ephemeral range and kwokctl's ports, not handed out before by this
// process.
func Free() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	// Below kwokctl's ports too: it counts down from 32766 to the first
	// free ones when it creates a cluster, perhaps beside this process.
	high := min(ephemeralStart(), kwokctlLow)
	if high-low < 100 {
		return 0, fmt.Errorf("the ephemeral port range starts at %d: no room below it above %d", high, low)
	}
	n := high - low
	start := rand.IntN(n) // processes that run side by side start apart
	for i := range n {
		p := low + (start+i)%n
		if given[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		_ = l.Close()
		given[p] = true
		return p, nil
	}
	return 0, errors.New("no free loopback port below the ephemeral range")
}
