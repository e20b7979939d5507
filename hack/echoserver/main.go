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
//	echoserver serve [-addr :8080]   HTTP: "/" answers $NAME (or the host
//	                                 name), "/status/NNN" answers code NNN,
//	                                 "/healthz" 200; logs each request
//	echoserver get [-n N] [-wait D] URL
//	                                 N requests, one connection each; prints
//	                                 "count body" per distinct answer and
//	                                 "errors N", and exits 1 if N > 0; with
//	                                 -wait, first waits up to D for one
//	                                 answer (a Service not yet routed)
//	echoserver lookup NAME           the addresses NAME resolves to
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
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
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: echoserver serve [-addr :8080] | get [-n N] [-wait D] URL | lookup NAME")
	os.Exit(2)
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", ":8080", "listen address")
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
