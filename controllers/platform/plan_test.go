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

package platform

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// platform builds a Platform from "name:dep,dep" entries.
func platform(version string, comps ...string) *appsv1alpha1.Platform {
	p := &appsv1alpha1.Platform{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", Namespace: "prod"},
		Spec:       appsv1alpha1.PlatformSpec{ImageRepository: "reg.example.com/acme", Version: version},
	}
	for _, c := range comps {
		name, deps, _ := strings.Cut(c, ":")
		comp := appsv1alpha1.PlatformComponent{Name: name}
		if deps != "" {
			comp.DependsOn = strings.Split(deps, ",")
		}
		p.Spec.Components = append(p.Spec.Components, comp)
	}
	appsv1alpha1.DefaultPlatform(p) // the builders get what admit.Prepare gives them
	return p
}

func img(name, version string) string { return "reg.example.com/acme/" + name + ":" + version }

func ready(name, version string) Live {
	return Live{Exists: true, Ready: true, Image: img(name, version)}
}

func rolling(name, version string) Live { return Live{Exists: true, Image: img(name, version)} }

func TestPlan(t *testing.T) {
	type want struct {
		deploy bool
		image  string
		phase  appsv1alpha1.ComponentPhase
	}
	W := func(deploy bool, image string, phase appsv1alpha1.ComponentPhase) want {
		return want{deploy, image, phase}
	}
	const (
		waiting   = appsv1alpha1.ComponentWaiting
		deploying = appsv1alpha1.ComponentDeploying
		isReady   = appsv1alpha1.ComponentReady
		disabled  = appsv1alpha1.ComponentDisabled
		failed    = appsv1alpha1.ComponentFailed
	)
	cases := []struct {
		name    string
		p       *appsv1alpha1.Platform
		disable string
		live    map[string]Live
		blocked map[string]string
		want    map[string]want
	}{
		{
			name: "on a fresh platform only the roots are created",
			p:    platform("1", "db", "api:db", "web:api"),
			want: map[string]want{"db": W(true, img("db", "1"), deploying), "api": W(false, img("api", "1"), waiting), "web": W(false, img("web", "1"), waiting)},
		},
		{
			name: "a dependent is created once its dependency is Ready",
			p:    platform("1", "db", "api:db", "web:api"),
			live: map[string]Live{"db": ready("db", "1")},
			want: map[string]want{"db": W(true, img("db", "1"), isReady), "api": W(true, img("api", "1"), deploying), "web": W(false, img("web", "1"), waiting)},
		},
		{
			name: "a dependency that exists but is not Ready still gates creation",
			p:    platform("1", "db", "api:db"),
			live: map[string]Live{"db": rolling("db", "1")},
			want: map[string]want{"db": W(true, img("db", "1"), deploying), "api": W(false, img("api", "1"), waiting)},
		},
		{
			name: "in a diamond the join waits for both sides",
			p:    platform("1", "a", "b:a", "c:a", "d:b,c"),
			live: map[string]Live{"a": ready("a", "1"), "b": ready("b", "1"), "c": rolling("c", "1")},
			want: map[string]want{"a": W(true, img("a", "1"), isReady), "b": W(true, img("b", "1"), isReady), "c": W(true, img("c", "1"), deploying), "d": W(false, img("d", "1"), waiting)},
		},
		{
			name: "a version bump moves the roots first and holds the rest on the old image",
			p:    platform("2", "db", "api:db", "web:api"),
			live: map[string]Live{"db": ready("db", "1"), "api": ready("api", "1"), "web": ready("web", "1")},
			want: map[string]want{"db": W(true, img("db", "2"), deploying), "api": W(true, img("api", "1"), waiting), "web": W(true, img("web", "1"), waiting)},
		},
		{
			name: "a dependency on the new image but not Ready yet still holds its dependents",
			p:    platform("2", "db", "api:db"),
			live: map[string]Live{"db": rolling("db", "2"), "api": ready("api", "1")},
			want: map[string]want{"db": W(true, img("db", "2"), deploying), "api": W(true, img("api", "1"), waiting)},
		},
		{
			name: "once a dependency is Ready on the new image its dependents move",
			p:    platform("2", "db", "api:db", "web:api"),
			live: map[string]Live{"db": ready("db", "2"), "api": ready("api", "1"), "web": ready("web", "1")},
			want: map[string]want{"db": W(true, img("db", "2"), isReady), "api": W(true, img("api", "2"), deploying), "web": W(true, img("web", "1"), waiting)},
		},
		{
			name: "in a diamond the join moves only after both sides did",
			p:    platform("2", "a", "b:a", "c:a", "d:b,c"),
			live: map[string]Live{"a": ready("a", "2"), "b": ready("b", "2"), "c": ready("c", "1"), "d": ready("d", "1")},
			want: map[string]want{"a": W(true, img("a", "2"), isReady), "b": W(true, img("b", "2"), isReady), "c": W(true, img("c", "2"), deploying), "d": W(true, img("d", "1"), waiting)},
		},
		{
			name:    "a disabled component is not applied and does not hold its dependents back",
			p:       platform("1", "cache", "api:cache"),
			disable: "cache",
			live:    map[string]Live{"cache": ready("cache", "1")},
			want:    map[string]want{"cache": W(false, "", disabled), "api": W(true, img("api", "1"), deploying)},
		},
		{
			name:    "a component whose database is not ready is not created, and its dependents wait",
			p:       platform("1", "db", "api:db", "web:api"),
			live:    map[string]Live{"db": ready("db", "1")},
			blocked: map[string]string{"api": "Waiting for its database: ServerUnreachable"},
			want:    map[string]want{"db": W(true, img("db", "1"), isReady), "api": W(false, img("api", "1"), waiting), "web": W(false, img("web", "1"), waiting)},
		},
		{
			name:    "a running component whose database becomes unreachable goes on running",
			p:       platform("1", "api"),
			live:    map[string]Live{"api": ready("api", "1")},
			blocked: map[string]string{"api": "Waiting for its database: ServerUnreachable"},
			want:    map[string]want{"api": W(true, img("api", "1"), isReady)},
		},
		{
			name: "a failed workload is reported Failed and still applied",
			p:    platform("1", "db"),
			live: map[string]Live{"db": {Exists: true, Image: img("db", "1"), Failed: true, Message: "ProgressDeadlineExceeded"}},
			want: map[string]want{"db": W(true, img("db", "1"), failed)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.p.Spec.Components {
				if tc.p.Spec.Components[i].Name == tc.disable {
					tc.p.Spec.Components[i].Disable = true
				}
			}
			steps, err := Plan(tc.p, tc.live, tc.blocked)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range steps {
				got := want{s.Deploy, s.Image, s.Phase}
				if got != tc.want[s.Name] {
					t.Errorf("%s: got %+v (%s), want %+v", s.Name, got, s.Message, tc.want[s.Name])
				}
				if s.Message == "" {
					t.Errorf("%s: no message", s.Name)
				}
			}
		})
	}
}

func TestPlanRefusesACycle(t *testing.T) {
	_, err := Plan(platform("1", "a:b", "b:a"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "a → b → a") {
		t.Fatalf("err = %v, want one naming the cycle a → b → a", err)
	}
}

func TestEffectiveImage(t *testing.T) {
	p := platform("3.1.0", "api")
	c := &p.Spec.Components[0]
	if got := EffectiveImage(p, c); got != "reg.example.com/acme/api:3.1.0" {
		t.Errorf("default = %s", got)
	}
	c.ImageName, c.Tag = "acme-api", "pinned"
	if got := EffectiveImage(p, c); got != "reg.example.com/acme/acme-api:pinned" {
		t.Errorf("name and tag = %s", got)
	}
	c.Image = "docker.io/library/redis:7"
	if got := EffectiveImage(p, c); got != "docker.io/library/redis:7" {
		t.Errorf("override = %s", got)
	}
}

func withHooks(p *appsv1alpha1.Platform, name string, bootstrap, preUpgrade bool) *appsv1alpha1.Platform {
	for i := range p.Spec.Components {
		if c := &p.Spec.Components[i]; c.Name == name {
			c.Hooks = &appsv1alpha1.ComponentHooks{}
			if bootstrap {
				c.Hooks.Bootstrap = &appsv1alpha1.HookJob{Command: []string{"init"}}
			}
			if preUpgrade {
				c.Hooks.PreUpgrade = &appsv1alpha1.HookJob{Command: []string{"migrate"}}
			}
		}
	}
	appsv1alpha1.DefaultPlatform(p)
	return p
}

func stepOf(t *testing.T, p *appsv1alpha1.Platform, live map[string]Live, name string) Step {
	t.Helper()
	steps, err := Plan(p, live, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step for %s", name)
	return Step{}
}

func TestPlanBootstrapRunsOnceAfterFirstReadyAndHoldsDependents(t *testing.T) {
	p := withHooks(platform("1", "db", "api:db"), "db", true, false)
	// Not Ready yet: no Job.
	live := map[string]Live{"db": rolling("db", "1")}
	if s := stepOf(t, p, live, "db"); s.Bootstrap {
		t.Fatal("the bootstrap Job must wait for the component to be Ready")
	}
	// Ready: the Job is applied, the component is not Ready yet, api waits.
	live["db"] = ready("db", "1")
	s := stepOf(t, p, live, "db")
	if !s.Bootstrap || s.Phase != appsv1alpha1.ComponentDeploying || !strings.Contains(s.Message, "acme-db-bootstrap") {
		t.Fatalf("step %+v; want the bootstrap Job run, Deploying", s)
	}
	if a := stepOf(t, p, live, "api"); a.Deploy {
		t.Fatal("api must wait for db's bootstrap")
	}
	// Failed: db Failed with the Job's message, api still waits.
	l := ready("db", "1")
	l.Bootstrap = Hook{Exists: true, Done: true, Message: "BackoffLimitExceeded: Job has reached the specified backoff limit"}
	live["db"] = l
	if s := stepOf(t, p, live, "db"); s.Phase != appsv1alpha1.ComponentFailed || !strings.Contains(s.Message, "BackoffLimitExceeded") {
		t.Fatalf("step %+v; want Failed with the Job's message", s)
	}
	if a := stepOf(t, p, live, "api"); a.Deploy {
		t.Fatal("api must wait while db's bootstrap failed")
	}
	// Succeeded: Ready, bootstrapped, api created, the Job kept.
	l.Bootstrap = Hook{Exists: true, Done: true, Succeeded: true}
	live["db"] = l
	s = stepOf(t, p, live, "db")
	if s.Phase != appsv1alpha1.ComponentReady || !s.Bootstrapped || !s.Bootstrap {
		t.Fatalf("step %+v; want Ready, bootstrapped, the Job kept", s)
	}
	if a := stepOf(t, p, live, "api"); !a.Deploy {
		t.Fatal("api must start once db is bootstrapped")
	}
	// The Job deleted later, status says bootstrapped: never run again.
	l.Bootstrap, l.Bootstrapped = Hook{}, true
	live["db"] = l
	if s := stepOf(t, p, live, "db"); s.Bootstrap || s.Phase != appsv1alpha1.ComponentReady {
		t.Fatalf("step %+v; a bootstrapped component never runs its bootstrap again", s)
	}
}

func TestPlanPreUpgradeRunsWithTheNewImageBeforeTheMove(t *testing.T) {
	p := withHooks(platform("2", "db", "api:db"), "db", false, true)
	live := map[string]Live{"db": ready("db", "1"), "api": ready("api", "1")}
	s := stepOf(t, p, live, "db")
	if !s.PreUpgrade || s.Upgrade || s.Image != img("db", "1") {
		t.Fatalf("step %+v; want the preUpgrade Job while db stays on 1", s)
	}
	l := ready("db", "1")
	l.PreUpgrade = Hook{Exists: true, Done: true, Message: "DeadlineExceeded: Job was active longer than specified deadline"}
	live["db"] = l
	s = stepOf(t, p, live, "db")
	if s.Phase != appsv1alpha1.ComponentFailed || s.Image != img("db", "1") || !s.UpgradeFailed || !strings.Contains(s.Message, "DeadlineExceeded") {
		t.Fatalf("step %+v; want Failed on image 1 with the Job's message", s)
	}
	if a := stepOf(t, p, live, "api"); a.Image != img("api", "1") {
		t.Fatalf("api moved to %s although db's migration failed", a.Image)
	}
	l.PreUpgrade = Hook{Exists: true, Done: true, Succeeded: true}
	live["db"] = l
	s = stepOf(t, p, live, "db")
	if !s.Upgrade || s.Image != img("db", "2") || s.PreviousImage != img("db", "1") || !s.PreUpgrade {
		t.Fatalf("step %+v; want the move to 2 after the migration, the Job kept", s)
	}
}

func TestPlanPausesOrRollsBackAFailedUpgrade(t *testing.T) {
	failedOn2 := Live{Exists: true, Failed: true, Message: `ReplicaSet "db-x" has timed out progressing.`,
		Image: img("db", "2"), PreviousImage: img("db", "1")}
	// db and cache are independent; db failed on 2; cache has not moved yet.
	p := platform("2", "db", "cache", "api:db")
	live := map[string]Live{"db": failedOn2, "cache": ready("cache", "1"), "api": ready("api", "1")}
	s := stepOf(t, p, live, "db")
	if s.Phase != appsv1alpha1.ComponentFailed || s.Image != img("db", "2") || s.RolledBack {
		t.Fatalf("Pause: step %+v; want db left Failed on 2", s)
	}
	if c := stepOf(t, p, live, "cache"); c.Image != img("cache", "1") || !strings.Contains(c.Message, "Upgrade paused") {
		t.Fatalf("Pause: cache step %+v; want it held on 1", c)
	}

	p.Spec.UpgradePolicy.OnFailure = appsv1alpha1.UpgradeRollback
	s = stepOf(t, p, live, "db")
	if !s.RolledBack || s.Image != img("db", "1") || s.FailedImage != img("db", "2") || s.Phase != appsv1alpha1.ComponentFailed {
		t.Fatalf("Rollback: step %+v; want db back on 1, 2 recorded as failed", s)
	}
	// After the rollback: db runs 1 again and stays there; nothing moves.
	back := ready("db", "1")
	back.PreviousImage, back.FailedImage = img("db", "1"), img("db", "2")
	live["db"] = back
	s = stepOf(t, p, live, "db")
	if s.Upgrade || s.Image != img("db", "1") || s.Phase != appsv1alpha1.ComponentFailed || !s.UpgradeFailed {
		t.Fatalf("after rollback: step %+v; want db held on 1, Failed", s)
	}
	if c := stepOf(t, p, live, "cache"); c.Image != img("cache", "1") {
		t.Fatal("cache must not move after db was rolled back")
	}
	// A new version is a new attempt.
	p.Spec.Version = "3"
	if s := stepOf(t, p, live, "db"); !s.Upgrade || s.Image != img("db", "3") || s.FailedImage != "" {
		t.Fatalf("version 3: step %+v; want the move to 3", s)
	}
}
