package ports

import (
	"fmt"
	"net"
	"testing"
)

func TestFreeHandsOutBindablePortsBelowTheEphemeralRangeOnce(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		p, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if p < low || p >= ephemeralStart() {
			t.Fatalf("port %d is outside [%d, %d)", p, low, ephemeralStart())
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		_ = l.Close()
	}
}
