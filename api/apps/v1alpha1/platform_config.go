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
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"text/template"
)

// MaxRenderedConfig bounds what one config template may produce (a
// ConfigMap holds at most 1 MiB).
const MaxRenderedConfig = 1 << 20

// ConfigFacts are what a component's config templates read. Everything in
// them follows from the Platform's spec, so a template that renders at
// admission renders in the controller too.
type ConfigFacts struct {
	// Platform is the platform's name, namespace and the version the
	// component runs (or moves to).
	Platform PlatformFacts
	// Values is spec.values.
	Values map[string]string
	// Components are the platform's components by name, with their
	// Service's address.
	Components map[string]ComponentFacts
	// Database is the component's own database; nil without one.
	Database *DatabaseFacts
}

// PlatformFacts describe the platform.
type PlatformFacts struct {
	Name, Namespace, Version string
}

// ComponentFacts describe a component's Service: Host is its DNS name in
// the cluster (empty for a component without ports), Ports its ports by
// name.
type ComponentFacts struct {
	Name  string
	Host  string
	Ports map[string]int32
}

// DatabaseFacts describe a component's database, never its password.
type DatabaseFacts struct {
	Host string
	Port int32
	Name string
	User string
}

// ConfigFactsFor are the facts of component c of a defaulted Platform p
// that runs (or moves to) version.
func ConfigFactsFor(p *Platform, c *PlatformComponent, version string) ConfigFacts {
	f := ConfigFacts{
		Platform:   PlatformFacts{Name: p.Name, Namespace: p.Namespace, Version: version},
		Values:     p.Spec.Values,
		Components: map[string]ComponentFacts{},
	}
	if f.Values == nil {
		f.Values = map[string]string{}
	}
	for i := range p.Spec.Components {
		o := &p.Spec.Components[i]
		cf := ComponentFacts{Name: o.Name, Ports: map[string]int32{}}
		if len(o.Ports) > 0 && o.Workload != WorkloadCronJob {
			cf.Host = p.Name + "-" + o.Name + "." + p.Namespace + ".svc"
			for _, pt := range o.Ports {
				cf.Ports[pt.Name] = pt.Port
			}
		}
		f.Components[o.Name] = cf
	}
	if d := p.Spec.Database; d != nil && c.HasDatabase() {
		port := d.Port
		if port == 0 {
			port = DefaultDatabasePort(d.Engine)
		}
		f.Database = &DatabaseFacts{Host: d.Host, Port: port, Name: DatabaseName(p, c), User: DatabaseUser(p, c)}
	}
	return f
}

// RenderConfigFile renders one config file's content with the facts.
// Every name a template uses must exist: a missing value, component or
// port is an error, not an empty string.
func RenderConfigFile(f ConfigFacts, name, content string) (string, error) {
	if !strings.Contains(content, "{{") {
		return content, nil
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"service": func(component, port string) (string, error) {
			c, ok := f.Components[component]
			if !ok {
				return "", fmt.Errorf("no component %q", component)
			}
			if c.Host == "" {
				return "", fmt.Errorf("component %q has no Service (no ports)", component)
			}
			n, ok := c.Ports[port]
			if !ok {
				return "", fmt.Errorf("component %q has no port %q", component, port)
			}
			return net.JoinHostPort(c.Host, strconv.Itoa(int(n))), nil
		},
	}).Parse(content)
	if err != nil {
		return "", err
	}
	var out limitedBuffer
	if err := t.Execute(&out, f); err != nil {
		return "", err
	}
	return out.String(), nil
}

// RenderConfig renders every config file of component c; errs holds the
// error of each file that does not render, by file name.
func RenderConfig(p *Platform, c *PlatformComponent, version string) (files map[string]string, errs map[string]error) {
	if len(c.Config) == 0 {
		return nil, nil
	}
	f := ConfigFactsFor(p, c, version)
	files = map[string]string{}
	for name, content := range c.Config {
		out, err := RenderConfigFile(f, name, content)
		if err != nil {
			if errs == nil {
				errs = map[string]error{}
			}
			errs[name] = err
			continue
		}
		files[name] = out
	}
	return files, errs
}

var errTooLarge = errors.New("renders to more than 1 MiB")

// limitedBuffer fails a write past MaxRenderedConfig, so a template that
// loops cannot exhaust memory.
type limitedBuffer struct{ strings.Builder }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > MaxRenderedConfig {
		return 0, errTooLarge
	}
	return b.Builder.Write(p)
}
