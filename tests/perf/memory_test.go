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

package perf

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const mib = 1 << 20

// peakRSS is the manager's resident-set high-water mark (VmHWM), in MiB.
func (e *env) peakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.manager.Process.Pid))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				e.t.Fatal(err)
			}
			return kb * 1024 / mib
		}
	}
	e.t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// ScalePoint is one size of the scaling curve.
type ScalePoint struct {
	PodSets                 int
	Seconds, MsPerPodSet    float64
	PeakRSSMiB, PeakHeapMiB float64
}

// measureScaling converges each size of PodSets with a freshly started
// manager and records the time and the manager's peak memory. All but the
// last size's PodSets are deleted after their run.
func measureScaling(t *testing.T, e *env, sizes []int) []ScalePoint {
	var out []ScalePoint
	for i, size := range sizes {
		e.stopManager()
		e.startManager()
		ns := fmt.Sprintf("scale-%d", size)
		namespace(t, e.c, ns)
		var peakHeap float64
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for {
				if m, err := e.readMetrics(); err == nil {
					peakHeap = max(peakHeap, sum(m, "go_memstats_heap_inuse_bytes", "")/mib)
				}
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
			}
		}()
		d := convergePodSets(t, e.c, ns, size)
		close(stop)
		<-stopped
		p := ScalePoint{PodSets: size, Seconds: d.Seconds(), MsPerPodSet: 1000 * d.Seconds() / float64(size), PeakRSSMiB: e.peakRSS(), PeakHeapMiB: peakHeap}
		t.Logf("scaling: %d PodSets Ready in %s (%.0f ms each), peak RSS %.0f MiB, peak heap %.0f MiB",
			size, d.Round(time.Millisecond), p.MsPerPodSet, p.PeakRSSMiB, p.PeakHeapMiB)
		out = append(out, p)
		if i < len(sizes)-1 {
			dropNamespace(t, e.c, ns)
		}
	}
	return out
}

// MemoryFigures compare the cache's memory savings on and off.
type MemoryFigures struct {
	PodSets, Owned, Unrelated int
	Settings                  []MemorySetting
}

// MemorySetting is the manager's memory under one cache setting, after it
// has listed everything and reconciled every PodSet.
type MemorySetting struct {
	StripManagedFields, LabelFilter bool
	HeapMiB, RSSMiB, PeakRSSMiB     stats
	WritesAtStart                   float64
}

// unrelated creates n ConfigMaps and n Secrets kubeforge has nothing to do
// with, of about 2 KiB each: the rest of a cluster, which the label filter
// keeps out of the cache.
func unrelated(t *testing.T, c client.Client, n int) {
	namespace(t, c, "unrelated")
	data := strings.Repeat("x", 2048)
	createAll(t, c, n, func(i int) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "unrelated", Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"data": data}}
	})
	createAll(t, c, n, func(i int) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "unrelated", Name: fmt.Sprintf("s-%d", i)}, StringData: map[string]string{"data": data}}
	})
}

// measureMemory restarts the manager under each cache setting, reps times,
// with podSets PodSets (each owning a Deployment and its Pod) and the
// unrelated objects in the cluster, and reads its memory once it has
// reconciled every PodSet and settled.
func measureMemory(t *testing.T, e *env, podSets, reps int) MemoryFigures {
	f := MemoryFigures{PodSets: podSets, Owned: 2 * podSets, Unrelated: 2 * podSets}
	unrelated(t, e.c, podSets)
	// The small version (make test-perf) only keeps the path from rotting:
	// fewer readings, a shorter settle.
	type setting struct{ strip, filter bool }
	settle, readings := 5*time.Second, 10
	settings := []setting{{true, true}, {false, true}, {true, false}, {false, false}}
	if *n < 100 {
		// Each flag's both values, in two restarts instead of four.
		settle, readings, settings = time.Second, 3, []setting{{true, true}, {false, false}}
	}
	for _, s := range settings {
		var heap, rss, peak []float64
		var writes float64
		for range reps {
			e.stopManager()
			e.extra = []string{fmt.Sprintf("--cache-strip-managed-fields=%t", s.strip), fmt.Sprintf("--cache-label-filter=%t", s.filter)}
			e.startManager()
			waitFor(t, 5*time.Minute, "the manager to reconcile every PodSet", func() bool {
				_, reconciles := e.scrape()
				return reconciles >= float64(podSets)
			})
			time.Sleep(settle)
			// The lowest of ten heap readings is the closest to the live
			// heap: the garbage collector runs between them.
			low := 0.0
			for i := range readings {
				m := e.metricsText()
				if h := sum(m, "go_memstats_heap_inuse_bytes", "") / mib; i == 0 || h < low {
					low = h
				}
				if i == readings-1 {
					rss = append(rss, sum(m, "process_resident_memory_bytes", "")/mib)
				}
				time.Sleep(time.Second)
			}
			w, _ := e.scrape()
			writes += w
			heap, peak = append(heap, low), append(peak, e.peakRSS())
		}
		ms := MemorySetting{StripManagedFields: s.strip, LabelFilter: s.filter, HeapMiB: summarize(heap), RSSMiB: summarize(rss), PeakRSSMiB: summarize(peak), WritesAtStart: writes}
		t.Logf("memory: strip managedFields %t, label filter %t: heap %.0f MiB, RSS %.0f MiB, peak RSS %.0f MiB, %v writes",
			s.strip, s.filter, ms.HeapMiB.Median, ms.RSSMiB.Median, ms.PeakRSSMiB.Median, writes)
		f.Settings = append(f.Settings, ms)
	}
	e.stopManager()
	e.extra = nil
	e.startManager()
	return f
}

// linearity is the cost per PodSet at the largest size over that at the
// smallest: 1 is linear, more is worse than linear.
func linearity(points []ScalePoint) float64 {
	s := append([]ScalePoint(nil), points...)
	sort.Slice(s, func(i, j int) bool { return s[i].PodSets < s[j].PodSets })
	return s[len(s)-1].MsPerPodSet / s[0].MsPerPodSet
}
