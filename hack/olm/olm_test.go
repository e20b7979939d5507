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

package olm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"sigs.k8s.io/yaml"
)

const root = "../.."

var (
	bundleDir  = filepath.Join(root, "bundle")
	catalogDir = filepath.Join(root, "catalog")
	dockerfile = filepath.Join(root, "bundle.Dockerfile")
)

// makeVar is a Makefile variable: the environment's (make exports it to
// the tests) or the Makefile's default.
func makeVar(t *testing.T, name string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	raw, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + ` \?= (.+)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	v := strings.TrimSpace(string(m[1]))
	if strings.Contains(v, "$(VERSION)") {
		v = strings.ReplaceAll(v, "$(VERSION)", makeVar(t, "VERSION"))
	}
	return v
}

func options(t *testing.T) Options {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Root: abs, Version: makeVar(t, "VERSION"), Image: makeVar(t, "IMG"), BundleImage: makeVar(t, "BUNDLE_IMG")}
}

// The committed bundle, bundle.Dockerfile and catalog are exactly what
// `make bundle` generates from config/ now.
func TestBundleIsGeneratedFromConfig(t *testing.T) {
	files, err := Generate(options(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(bundleDir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale or missing: run `make bundle`", filepath.Clean(filepath.Join("bundle", name)))
		}
	}
	committed, _ := filepath.Glob(filepath.Join(bundleDir, ManifestsDir, "*"))
	for _, c := range committed {
		if _, ok := files[ManifestsDir+filepath.Base(c)]; !ok {
			t.Errorf("%s is not generated from config/ any more: run `make bundle`", c)
		}
	}
}

func noProblems(t *testing.T, what string, problems []string) {
	t.Helper()
	sort.Strings(problems)
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
}

func TestBundleFormat(t *testing.T) {
	noProblems(t, "bundle format", CheckFormat(bundleDir))
}

// What `operator-sdk bundle validate --select-optional
// suite=operatorframework` runs: no error and no warning.
func TestOperatorFrameworkValidators(t *testing.T) {
	noProblems(t, "validators", CheckValidators(bundleDir))
}

func TestBundleInstallsWithoutOptionalCRDs(t *testing.T) {
	noProblems(t, "installable anywhere", CheckInstallableAnywhere(bundleDir))
}

// A release's catalog keeps the bundles published before it, and its
// bundle replaces the previous head: what OLM needs to upgrade a running
// operator (and what the olm e2e specs install).
func TestCatalogOfAnUpgrade(t *testing.T) {
	first := options(t)
	out := t.TempDir()
	files, err := Generate(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(files, filepath.Join(out, "first", "bundle")); err != nil {
		t.Fatal(err)
	}
	next := first
	next.Version = "99.0.0"
	next.BundleImage = strings.Replace(first.BundleImage, ":v"+first.Version, ":v99.0.0", 1)
	next.Replaces = Package + ".v" + first.Version
	next.Previous = filepath.Join(out, "first", "catalog", "kubeforge", "catalog.yaml")
	if files, err = Generate(next); err != nil {
		t.Fatal(err)
	}
	if err := Write(files, filepath.Join(out, "next", "bundle")); err != nil {
		t.Fatal(err)
	}
	noProblems(t, "next bundle", CheckValidators(filepath.Join(out, "next", "bundle")))
	noProblems(t, "upgrade catalog", CheckCatalog(filepath.Join(out, "next", "catalog"), Package+".v99.0.0"))
	csv, _, err := loadBundle(filepath.Join(out, "next", "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if csv.Spec.Replaces != next.Replaces {
		t.Errorf("the CSV replaces %q, want %q", csv.Spec.Replaces, next.Replaces)
	}
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(filepath.Join(out, "next", "catalog")))
	if err != nil {
		t.Fatal(err)
	}
	var bundles []string
	for _, b := range cfg.Bundles {
		bundles = append(bundles, b.Name+" "+b.Image)
	}
	want := []string{Package + ".v" + first.Version + " " + first.BundleImage, Package + ".v99.0.0 " + next.BundleImage}
	if !reflect.DeepEqual(bundles, want) {
		t.Errorf("bundles %v, want %v", bundles, want)
	}
	if len(cfg.Channels) != 1 || len(cfg.Channels[0].Entries) != 2 || cfg.Channels[0].Entries[1].Replaces != next.Replaces {
		t.Errorf("channels %+v, want %s with two entries, the second replacing the first", cfg.Channels, Channel)
	}
}

func TestScorecardStaticChecks(t *testing.T) {
	noProblems(t, "scorecard", CheckScorecard(bundleDir))
}

func TestBundleInSyncWithConfig(t *testing.T) {
	noProblems(t, "sync", CheckSync(root, bundleDir, dockerfile, makeVar(t, "VERSION")))
}

func TestCatalog(t *testing.T) {
	noProblems(t, "catalog", CheckCatalog(catalogDir, Package+".v"+makeVar(t, "VERSION")))
}

// copyTree copies dir to a temporary directory.
func copyTree(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func editCSV(t *testing.T, bundle string, mutate func(*v1alpha1.ClusterServiceVersion)) {
	t.Helper()
	path := filepath.Join(bundle, CSVFile)
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := readYAML(path, csv); err != nil {
		t.Fatal(err)
	}
	mutate(csv)
	b, err := yaml.Marshal(csv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Each check fails, with its message, on a copy of the bundle with one
// thing broken.
func TestEachCheckCatchesItsBreakage(t *testing.T) {
	csvPath := func(dir string) string { return filepath.Join(dir, CSVFile) }
	version := makeVar(t, "VERSION")
	cases := []struct {
		name   string
		check  func(bundle, catalog, dockerfile string) []string
		break_ func(t *testing.T, bundle, catalog, dockerfile string)
		want   string
	}{
		{
			name:  "a missing owned CRD",
			check: func(b, _, _ string) []string { return CheckScorecard(b) },
			break_: func(t *testing.T, b, _, _ string) {
				_ = os.Remove(filepath.Join(b, ManifestsDir, "apps.kubeforge.io_podsets.yaml"))
			},
			want: "owned CRD podsets.apps.kubeforge.io is not in the bundle",
		},
		{
			name:  "a missing owned CRD, for the validators",
			check: func(b, _, _ string) []string { return CheckValidators(b) },
			break_: func(t *testing.T, b, _, _ string) {
				_ = os.Remove(filepath.Join(b, ManifestsDir, "apps.kubeforge.io_podsets.yaml"))
			},
			want: `owned CRD "apps.kubeforge.io/v1alpha1, Kind=PodSet" not found in bundle`,
		},
		{
			name:  "a bad maintainer e-mail",
			check: func(b, _, _ string) []string { return CheckValidators(b) },
			break_: func(t *testing.T, b, _, _ string) {
				edit(t, csvPath(b), "email: maintainers@kubeforge.io", "email: maintainers-at-kubeforge")
			},
			want: "email maintainers-at-kubeforge is invalid",
		},
		{
			name:  "an unknown capability level",
			check: func(b, _, _ string) []string { return CheckValidators(b) },
			break_: func(t *testing.T, b, _, _ string) {
				edit(t, csvPath(b), "capabilities: Seamless Upgrades", "capabilities: Fully Magic")
			},
			want: "not a valid capabilities level",
		},
		{
			name:  "an example with an unknown field",
			check: func(b, _, _ string) []string { return CheckScorecard(b) },
			break_: func(t *testing.T, b, _, _ string) {
				edit(t, csvPath(b), `"imageRepository": `, `"imageRepo": "x", "imageRepository": `)
			},
			want: "Platform example spec.imageRepo is not in the CRD schema",
		},
		{
			name:  "a spec key without a descriptor",
			check: func(b, _, _ string) []string { return CheckScorecard(b) },
			break_: func(t *testing.T, b, _, _ string) {
				edit(t, csvPath(b), "path: imageRepository", "path: imageRepositoryX")
			},
			want: "Platform: spec.imageRepository has no specDescriptor",
		},
		{
			name:  "an owned CRD without resources",
			check: func(b, _, _ string) []string { return CheckScorecard(b) },
			break_: func(t *testing.T, b, _, _ string) {
				editCSV(t, b, func(csv *v1alpha1.ClusterServiceVersion) { csv.Spec.CustomResourceDefinitions.Owned[0].Resources = nil })
			},
			want: "owned CRD balancers.networking.kubeforge.io lists no resources",
		},
		{
			name:  "a CRD that differs from config/crd",
			check: func(b, _, d string) []string { return CheckSync(root, b, d, version) },
			break_: func(t *testing.T, b, _, _ string) {
				edit(t, filepath.Join(b, ManifestsDir, "apps.kubeforge.io_podsets.yaml"), "shortNames:\n    - pset", "shortNames:\n    - ps")
			},
			want: "CRD podsets.apps.kubeforge.io differs from config/crd/bases (the bundle is stale: run `make bundle`)",
		},
		{
			name:  "a webhook missing from the CSV",
			check: func(b, _, d string) []string { return CheckSync(root, b, d, version) },
			break_: func(t *testing.T, b, _, _ string) {
				edit(t, csvPath(b), "generateName: vpodset-v1alpha1.kubeforge.io", "generateName: vpodset-old.kubeforge.io")
			},
			want: "webhook vpodset-v1alpha1.kubeforge.io of config/webhook is missing from the CSV",
		},
		{
			name:  "cluster permissions that differ from config/rbac",
			check: func(b, _, d string) []string { return CheckSync(root, b, d, version) },
			break_: func(t *testing.T, b, _, _ string) {
				editCSV(t, b, func(csv *v1alpha1.ClusterServiceVersion) {
					p := &csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0]
					p.Rules[0].Verbs = append(p.Rules[0].Verbs, "escalate")
				})
			},
			want: "the CSV's clusterPermissions differ from config/rbac's rules",
		},
		{
			name:  "namespaced permissions that differ from config/rbac",
			check: func(b, _, d string) []string { return CheckSync(root, b, d, version) },
			break_: func(t *testing.T, b, _, _ string) {
				editCSV(t, b, func(csv *v1alpha1.ClusterServiceVersion) {
					p := &csv.Spec.InstallStrategy.StrategySpec.Permissions[0]
					p.Rules = p.Rules[1:]
				})
			},
			want: "the CSV's permissions differ from config/rbac's rules",
		},
		{
			name:   "a Dockerfile label that differs from the annotations",
			check:  func(b, _, d string) []string { return CheckSync(root, b, d, version) },
			break_: func(t *testing.T, _, _, d string) { edit(t, d, "channels.v1="+Channel, "channels.v1=alpha") },
			want:   "bundle.Dockerfile's labels differ from bundle/metadata/annotations.yaml",
		},
		{
			name:   "a version other than the Makefile's",
			check:  func(b, _, d string) []string { return CheckSync(root, b, d, "9.9.9") },
			break_: func(t *testing.T, _, _, _ string) {},
			want:   "the Makefile's 9.9.9",
		},
		{
			name:  "an object whose CRD only some clusters serve",
			check: func(b, _, _ string) []string { return CheckInstallableAnywhere(b) },
			break_: func(t *testing.T, b, _, _ string) {
				monitor := "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: m\nspec: {}\n"
				if err := os.WriteFile(filepath.Join(b, ManifestsDir, "m_monitoring.coreos.com_v1_servicemonitor.yaml"), []byte(monitor), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: "a ServiceMonitor (monitoring.coreos.com/v1) installs only where its CRD is served",
		},
		{
			name:   "a bundle without its metadata",
			check:  func(b, _, _ string) []string { return CheckFormat(b) },
			break_: func(t *testing.T, b, _, _ string) { _ = os.Remove(filepath.Join(b, AnnotationFile)) },
			want:   "bundle format",
		},
		{
			name:  "a catalog whose channel names a bundle it does not have",
			check: func(_, c, _ string) []string { return CheckCatalog(c, Package+".v"+version) },
			break_: func(t *testing.T, _, c, _ string) {
				edit(t, filepath.Join(c, "kubeforge/catalog.yaml"), "- name: kubeforge.v"+version, "- name: kubeforge.v9.9.9")
			},
			want: "opm validate",
		},
		{
			name:   "a catalog whose head is another bundle",
			check:  func(_, c, _ string) []string { return CheckCatalog(c, Package+".v9.9.9") },
			break_: func(t *testing.T, _, _, _ string) {},
			want:   "the catalog's channel head is not kubeforge.v9.9.9",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, c := copyTree(t, bundleDir), copyTree(t, catalogDir)
			d := filepath.Join(t.TempDir(), "bundle.Dockerfile")
			raw, err := os.ReadFile(dockerfile)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(d, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if before := tc.check(b, c, d); len(before) > 0 && tc.want != "the Makefile's 9.9.9" && !strings.Contains(tc.want, "9.9.9") {
				t.Fatalf("the unbroken copy already fails: %v", before)
			}
			tc.break_(t, b, c, d)
			problems := tc.check(b, c, d)
			if len(problems) == 0 {
				t.Fatal("the check passed the broken bundle")
			}
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Fatalf("want a problem saying %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
}
