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

package v1alpha1

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Config templates are bounded before they run: each hostile template is
// refused with its reason, without running it (each check takes well
// under a millisecond here; the budget is the docs' "under a second").
func TestHostileConfigTemplatesAreRefusedBeforeTheyRun(t *testing.T) {
	facts := ConfigFacts{Values: map[string]string{}, Components: map[string]ComponentFacts{
		"db": {Name: "db", Host: "p-db.ns.svc", Ports: map[string]int32{"pg": 5432}}}}
	for i := 0; i < 200; i++ {
		facts.Values[fmt.Sprintf("v%d", i)] = "x"
	}
	for _, tc := range []struct{ name, template, reason string }{
		{"nested empty ranges", strings.Repeat("{{range .Values}}", 4) + strings.Repeat("{{end}}", 4), "steps"},
		{"a value built with printf", `{{$a := printf "%01000000d" 1}}{{$a}}{{$a}}`, "printf"},
		{"print concatenation", `{{$a := print .Values .Values}}`, "print"},
		{"recursion", `{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`, "define"},
		{"a range over a number", `{{range 1000000000}}{{end}}`, "range"},
		{"a range over a computed number", `{{range (len .Values)}}{{end}}`, "range"},
		{"a range over a number of the facts", `{{range $.Database.Port}}{{end}}`, "range"},
		{"a range over a port", `{{range index (index .Components "db").Ports "pg"}}{{end}}`, "range"},
		{"nested ranges over ports", strings.Repeat(`{{range (index .Components "db").Ports}}`, 13) + strings.Repeat("{{end}}", 13), "steps"},
		{"call", `{{call .X}}`, "call"},
		{"many sequential ranges", strings.Repeat("{{range .Values}}{{end}}", 600), "steps"},
	} {
		start := time.Now()
		_, err := RenderConfigFile(facts, "f", tc.template)
		if err == nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: err = %v, want one naming %q", tc.name, err, tc.reason)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("%s: refused after %s", tc.name, d)
		}
	}
}

func TestConfigTemplatesOfTheDocsStillRender(t *testing.T) {
	facts := ConfigFacts{Platform: PlatformFacts{Name: "acme", Namespace: "shop", Version: "1.2.0"},
		Values:     map[string]string{"region": "eu", "issuer": "https://id.example.com"},
		Components: map[string]ComponentFacts{"db": {Name: "db", Host: "acme-db.shop.svc", Ports: map[string]int32{"pg": 5432}}},
		Database:   &DatabaseFacts{Host: "pg.example.com", Port: 5432, Name: "acme_api", User: "acme_api"}}
	for template, want := range map[string]string{
		`issuer: {{ .Values.issuer }}`:                                                  "issuer: https://id.example.com",
		`database: {{ service "db" "pg" }}`:                                             "database: acme-db.shop.svc:5432",
		`{{ (index .Components "db").Host }}:{{ (index .Components "db").Ports.pg }}`:   "acme-db.shop.svc:5432",
		`{{ .Platform.Name }}/{{ .Platform.Version }} {{ .Database.User }}`:             "acme/1.2.0 acme_api",
		`{{ range $k, $v := .Values }}{{ $k }}={{ $v }};{{ end }}`:                      "issuer=https://id.example.com;region=eu;",
		`{{ if eq .Values.region "eu" }}gdpr{{ else }}none{{ end }}`:                    "gdpr",
		`{{ range .Components }}{{ range $n, $p := .Ports }}{{ $n }}{{ end }}{{ end }}`: "pg",
		`{{ "{{" }} literal`: "{{ literal",
	} {
		got, err := RenderConfigFile(facts, "f", template)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", template, got, err, want)
		}
	}
}

// kubeforge deletes a disabled component's Service, and the name is then
// anyone's to take in the namespace (an ExternalName to another host is
// enough): no config renders its address.
func TestAConfigCannotPointAtADisabledComponentsService(t *testing.T) {
	p := &Platform{}
	p.Name, p.Namespace = "acme", "shop"
	p.Spec.Components = []PlatformComponent{
		{Name: "db", Disable: true, Ports: []ComponentPort{{Name: "pg", Port: 5432}}},
		{Name: "api", Config: map[string]string{
			"service.conf": `database: {{ service "db" "pg" }}`,
			"index.conf":   `{{ (index .Components "db").Host }}`,
		}},
	}
	facts := ConfigFactsFor(p, &p.Spec.Components[1], "1")
	if db := facts.Components["db"]; db.Host != "" || len(db.Ports) != 0 {
		t.Errorf("the disabled component's facts = %+v, want no Host and no Ports", db)
	}
	files, errs := RenderConfig(p, &p.Spec.Components[1], "1")
	if err := errs["service.conf"]; err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("service of a disabled component: err = %v, want one saying it is disabled", err)
	}
	if got := files["index.conf"]; strings.Contains(got, "svc") {
		t.Errorf("index.conf = %q names the disabled component's Service", got)
	}
	p.Spec.Components[0].Disable = false
	files, errs = RenderConfig(p, &p.Spec.Components[1], "1")
	if files["service.conf"] != "database: acme-db.shop.svc:5432" || errs != nil {
		t.Errorf("enabled again: %q, %v", files["service.conf"], errs)
	}
}

// A component's config files are carried in its pod template: together,
// names and rendered contents, they are at most MaxRenderedConfig; the
// files past it (in name order) do not render, so admission refuses them.
func TestAComponentsConfigFilesTogetherStayWithinWhatAPodTemplateCarries(t *testing.T) {
	p := &Platform{}
	half := strings.Repeat("x", MaxRenderedConfig/2)
	c := &PlatformComponent{Name: "api", Config: map[string]string{"a.conf": half, "b.conf": "{{ .Platform.Name }}" + half, "c.conf": "small"}}
	files, errs := RenderConfig(p, c, "1.0.0")
	if _, ok := files["a.conf"]; !ok || errs["a.conf"] != nil {
		t.Errorf("a.conf, half the limit, was refused: %v", errs["a.conf"])
	}
	if err := errs["b.conf"]; err == nil || !strings.Contains(err.Error(), "128 KiB") {
		t.Errorf("b.conf takes the files past the limit: err = %v, want one naming 128 KiB", err)
	}
	if _, ok := files["c.conf"]; !ok {
		t.Errorf("c.conf fits beside a.conf and was left out: %v", errs["c.conf"])
	}
	size := 0
	for n, content := range files {
		size += len(n) + len(content)
	}
	if size > MaxRenderedConfig {
		t.Errorf("rendered files take %d bytes, over %d", size, MaxRenderedConfig)
	}
}
