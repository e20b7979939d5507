// Copyright 2026 The kubeforge Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Command echoserver is the test backend of the real node's end-to-end
// specs, built into an image here because none can be pulled:
//
//	echoserver serve [-addr :8080] [-udp ADDR]
//	                                 HTTP: "/" answers $NAME (or the host
//	                                 name), "/status/NNN" answers code NNN,
//	                                 "/healthz" 200; logs each request to
//	                                 "/"; with -udp, also echoes every UDP
//	                                 datagram on ADDR back to its sender
//	echoserver get [-n N] [-wait D] URL
//	                                 N requests, one connection each; prints
//	                                 "count body" per distinct answer and
//	                                 "errors N", and exits 1 if N > 0; with
//	                                 -wait, first waits up to D for one
//	                                 answer (a Service not yet routed)
//	echoserver lookup NAME           the addresses NAME resolves to
//	echoserver load [-udp] [-c C] [-d D] [-n N] [-timeout T] TARGET...
//	                                 a load bounded in time and count: C
//	                                 workers, each on its own keep-alive
//	                                 connection (GET TARGET, a URL) or UDP
//	                                 socket (a datagram to TARGET, host:port,
//	                                 and its echo), one request at a time,
//	                                 until D has passed or N requests were
//	                                 sent; prints one JSON line: requests
//	                                 (answered), errors, seconds, rps and the
//	                                 answered requests' p50_ms and p99_ms.
//	                                 Up to 16 targets, loaded one after the
//	                                 other, a line each
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "get":
		err = get(os.Args[2:])
	case "lookup":
		err = lookup(os.Args[2:])
	case "load":
		err = load(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: echoserver serve [-addr :8080] [-udp ADDR] | get [-n N] [-wait D] URL | lookup NAME |\n"+
		"       load [-udp] [-c C] [-d D] [-n N] [-timeout T] URL|HOST:PORT...")
	os.Exit(2)
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", ":8080", "listen address")
	udpAddr := fs.String("udp", "", "also echo UDP datagrams on this address")
	_ = fs.Parse(args)
	name := os.Getenv("NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "bad status code", http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
		fmt.Fprintln(w, name)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		fmt.Fprintln(w, name)
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if *udpAddr != "" {
		pc, err := net.ListenPacket("udp", *udpAddr)
		if err != nil {
			return err
		}
		defer pc.Close()
		go func() { <-ctx.Done(); _ = pc.Close() }()
		// A few readers on the one socket, so that the echo keeps up with
		// several senders.
		for range max(2, runtime.GOMAXPROCS(0)) {
			go echoUDP(pc)
		}
		log.Printf("echoserver %q echoing UDP on %s", name, *udpAddr)
	}
	log.Printf("echoserver %q listening on %s", name, *addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

func get(args []string) error {
	fs := flag.NewFlagSet("get", flag.ExitOnError)
	n := fs.Int("n", 1, "number of requests (at most 10000)")
	wait := fs.Duration("wait", 0, "wait up to this long for a first answer (at most 5m)")
	_ = fs.Parse(args)
	if fs.NArg() != 1 || *n < 1 || *n > 10000 || *wait < 0 || *wait > 5*time.Minute {
		usage()
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for deadline := time.Now().Add(*wait); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		resp, err := client.Get(fs.Arg(0))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
	}
	counts := map[string]int{}
	errors := 0
	for i := 0; i < *n; i++ {
		resp, err := client.Get(fs.Arg(0))
		if err != nil {
			errors++
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			errors++
			continue
		}
		counts[strings.TrimSpace(string(body))]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%d %s\n", counts[k], k)
	}
	fmt.Printf("errors %d\n", errors)
	if errors > 0 {
		return fmt.Errorf("%d of %d requests failed", errors, *n)
	}
	return nil
}

func lookup(args []string) error {
	if len(args) != 1 {
		usage()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, args[0])
	if err != nil {
		return err
	}
	for _, a := range addrs {
		fmt.Println(a)
	}
	return nil
}

// echoUDP sends every datagram back to its sender until pc is closed.
func echoUDP(pc net.PacketConn) {
	buf := make([]byte, 64*1024)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		_, _ = pc.WriteTo(buf[:n], from)
	}
}

// loadResult is what load prints, one JSON line.
type loadResult struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
}

// The bounds of load: it never runs longer, wider or more often.
const (
	maxLoadWorkers  = 1024
	maxLoadDuration = 5 * time.Minute
	maxLoadRequests = 10_000_000
)

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	udp := fs.Bool("udp", false, "UDP datagrams to HOST:PORT instead of HTTP GETs of a URL")
	c := fs.Int("c", 1, "concurrent workers, each on its own connection or socket (at most 1024)")
	d := fs.Duration("d", 5*time.Second, "how long to send (at most 5m)")
	n := fs.Int64("n", 1_000_000, "at most this many requests per target (at most 10,000,000)")
	timeout := fs.Duration("timeout", time.Second, "how long one request may take before it counts as an error (at most 30s)")
	_ = fs.Parse(args)
	if fs.NArg() < 1 || fs.NArg() > 16 || *c < 1 || *c > maxLoadWorkers || *d <= 0 || *d > maxLoadDuration ||
		*n < 1 || *n > maxLoadRequests || *timeout <= 0 || *timeout > 30*time.Second {
		usage()
	}
	// Several targets are loaded one after the other, each as if alone.
	var failed []string
	for _, target := range fs.Args() {
		res := loadOne(target, *udp, *c, *d, *n, *timeout)
		out, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Println(string(out))
		if res.Requests == 0 {
			failed = append(failed, fmt.Sprintf("%s: no request was answered (%d errors)", target, res.Errors))
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

// loadOne runs c workers against target until d has passed or n requests
// were sent.
func loadOne(target string, udp bool, c int, d time.Duration, n int64, timeout time.Duration) loadResult {
	var sent, failed atomic.Int64
	// take claims the next request, while time and count last.
	start := time.Now()
	deadline := start.Add(d)
	take := func() bool { return time.Now().Before(deadline) && sent.Add(1) <= n }
	lat := make([][]time.Duration, c)
	var wg sync.WaitGroup
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if udp {
				lat[w], err = udpWorker(target, w, timeout, take, &failed)
			} else {
				lat[w] = httpWorker(target, timeout, take, &failed)
			}
			if err != nil {
				failed.Add(1)
				fmt.Fprintln(os.Stderr, "echoserver load:", err)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	res := loadResult{Requests: int64(len(all)), Errors: failed.Load(), Seconds: secs, RPS: float64(len(all)) / secs}
	if len(all) > 0 {
		ms := func(q float64) float64 {
			return float64(all[min(len(all)-1, int(q*float64(len(all))))].Microseconds()) / 1000
		}
		res.P50ms, res.P99ms = ms(0.50), ms(0.99)
	}
	return res
}

// httpWorker GETs url over one keep-alive connection (made again after an
// error) while take allows, and returns the latencies of the answered
// requests.
func httpWorker(url string, timeout time.Duration, take func() bool, failed *atomic.Int64) []time.Duration {
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		MaxIdleConns: 1, MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: timeout}).DialContext,
	}}
	defer client.CloseIdleConnections()
	var lat []time.Duration
	for take() {
		t0 := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			failed.Add(1)
			continue
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			failed.Add(1)
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	return lat
}

// udpWorker sends numbered datagrams to addr from one socket, each once its
// echo came back (or timed out), while take allows, and returns the
// latencies of the echoed ones; a late echo of an earlier datagram is
// skipped.
func udpWorker(addr string, worker int, timeout time.Duration, take func() bool, failed *atomic.Int64) ([]time.Duration, error) {
	conn, err := net.DialTimeout("udp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var lat []time.Duration
	msg, buf := make([]byte, 16), make([]byte, 64)
	binary.BigEndian.PutUint64(msg, uint64(worker))
	for seq := uint64(0); take(); seq++ {
		binary.BigEndian.PutUint64(msg[8:], seq)
		t0 := time.Now()
		if _, err := conn.Write(msg); err != nil {
			failed.Add(1)
			time.Sleep(10 * time.Millisecond) // a refused port: do not spin
			continue
		}
		_ = conn.SetReadDeadline(t0.Add(timeout))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				failed.Add(1)
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					time.Sleep(10 * time.Millisecond) // refused: do not spin
				}
				break
			}
			if n == len(msg) && binary.BigEndian.Uint64(buf[8:16]) == seq {
				lat = append(lat, time.Since(t0))
				break
			}
		}
	}
	return lat, nil
}
