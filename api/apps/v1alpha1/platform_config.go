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
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// MaxRenderedConfig bounds what a component's config files (their names
// and rendered contents together) may come to: they are carried in the
// component's pod template, whose annotations hold at most 256 KiB
// (workload.MaxTemplateFiles).
const MaxRenderedConfig = 128 << 10

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
// the cluster, Ports its ports by name; both empty for a component without
// a Service (no ports, a CronJob, or disabled: kubeforge deletes a
// disabled component's Service, and a name it does not hold is anyone's
// to take in the namespace, so no config may point at it).
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
		if !o.Disable && len(o.Ports) > 0 && o.Workload != WorkloadCronJob {
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
	return renderConfigFile(f, name, content, MaxRenderedConfig)
}

func renderConfigFile(f ConfigFacts, name, content string, limit int) (string, error) {
	if !strings.Contains(content, "{{") {
		if len(content) > limit {
			return "", errTooLarge
		}
		return content, nil
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"service": func(component, port string) (string, error) {
			c, ok := f.Components[component]
			if !ok {
				return "", fmt.Errorf("no component %q", component)
			}
			if c.Host == "" {
				return "", fmt.Errorf("component %q has no Service (it is disabled, a CronJob or without ports)", component)
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
	if err := checkTemplate(t, f); err != nil {
		return "", err
	}
	out := limitedBuffer{limit: limit}
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
	// In name order, so that the files past the limit are always the same.
	names := make([]string, 0, len(c.Config))
	for name := range c.Config {
		names = append(names, name)
	}
	slices.Sort(names)
	left := MaxRenderedConfig
	for _, name := range names {
		out, err := renderConfigFile(f, name, c.Config[name], left-len(name))
		if err == nil {
			left -= len(name) + len(out)
		}
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

var errTooLarge = fmt.Errorf("takes the component's config files (names and rendered contents) past %d KiB", MaxRenderedConfig>>10)

// A config template is bounded by construction, in time and in memory,
// before it runs: Go's template execution cannot be interrupted, so a
// timeout would bound nothing. checkTemplate refuses, by the parse tree:
//
//   - define, block and template (recursion, and work that grows with each
//     nested call);
//   - every function but service, index, len, eq, ne, lt, le, gt, ge,
//     and, or and not: none of these builds a value larger than the facts
//     it is given (printf with a width, print and the escapers do);
//   - range over anything but the facts' own collections (a field, or
//     index of one): never over a number;
//   - a template whose steps, counting each range as its body times the
//     largest collection in the facts, exceed MaxTemplateSteps.
//
// Output stays limited to MaxRenderedConfig.

// MaxTemplateSteps bounds the work of one config template.
const MaxTemplateSteps = 100000

var templateFuncs = map[string]bool{"service": true, "index": true, "len": true, "eq": true, "ne": true, "lt": true,
	"le": true, "gt": true, "ge": true, "and": true, "or": true, "not": true}

func checkTemplate(t *template.Template, f ConfigFacts) error {
	if len(t.Templates()) > 1 {
		return errors.New("define and block are not allowed in config templates")
	}
	largest := len(f.Values)
	if len(f.Components) > largest {
		largest = len(f.Components)
	}
	for _, c := range f.Components {
		if len(c.Ports) > largest {
			largest = len(c.Ports)
		}
	}
	steps, err := listCost(t.Tree.Root, largest+1)
	if err != nil {
		return err
	}
	if steps > MaxTemplateSteps {
		return fmt.Errorf("would take up to %d steps to render, more than %d: fewer or shallower range loops", steps, MaxTemplateSteps)
	}
	return nil
}

// listCost is the most steps a list of nodes takes, each range counting
// its body n times; capped well above MaxTemplateSteps so it cannot overflow.
func listCost(l *parse.ListNode, n int) (int, error) {
	if l == nil {
		return 0, nil
	}
	total := 0
	for _, node := range l.Nodes {
		c, err := nodeCost(node, n)
		if err != nil {
			return 0, err
		}
		total = min(total+c, 2*MaxTemplateSteps)
	}
	return total, nil
}

func nodeCost(node parse.Node, n int) (int, error) {
	switch x := node.(type) {
	case *parse.TextNode, *parse.CommentNode, *parse.BreakNode, *parse.ContinueNode:
		return 1, nil
	case *parse.ActionNode:
		return pipeCost(x.Pipe)
	case *parse.IfNode:
		return branchCost(&x.BranchNode, n, 1)
	case *parse.WithNode:
		return branchCost(&x.BranchNode, n, 1)
	case *parse.RangeNode:
		if err := checkRangeOver(x.Pipe); err != nil {
			return 0, err
		}
		return branchCost(&x.BranchNode, n, n)
	case *parse.TemplateNode:
		return 0, errors.New("template calls are not allowed in config templates")
	default:
		return 0, fmt.Errorf("%s is not allowed in config templates", node)
	}
}

func branchCost(b *parse.BranchNode, n, times int) (int, error) {
	p, err := pipeCost(b.Pipe)
	if err != nil {
		return 0, err
	}
	body, err := listCost(b.List, n)
	if err != nil {
		return 0, err
	}
	other, err := listCost(b.ElseList, n)
	if err != nil {
		return 0, err
	}
	return min(p+times*(1+body)+other, 2*MaxTemplateSteps), nil
}

// pipeCost checks a pipeline's functions and counts its nodes.
func pipeCost(p *parse.PipeNode) (int, error) {
	if p == nil {
		return 0, nil
	}
	total := 1
	for _, cmd := range p.Cmds {
		for _, arg := range cmd.Args {
			switch a := arg.(type) {
			case *parse.IdentifierNode:
				if !templateFuncs[a.Ident] {
					return 0, fmt.Errorf("the function %s is not allowed in config templates (allowed: service, index, len, "+
						"eq, ne, lt, le, gt, ge, and, or, not)", a.Ident)
				}
			case *parse.PipeNode:
				c, err := pipeCost(a)
				if err != nil {
					return 0, err
				}
				total += c
			case *parse.ChainNode:
				if inner, ok := a.Node.(*parse.PipeNode); ok {
					c, err := pipeCost(inner)
					if err != nil {
						return 0, err
					}
					total += c
				}
			}
			total++
		}
	}
	return total, nil
}

// checkRangeOver allows a range only over the facts' collections, by the
// name of the field it reads: .Values, .Components or a component's
// .Ports, off the data, a variable or a parenthesized pipeline. Every other
// field of the facts is a string or a number (ranging over a number loops
// that many times), so anything else is refused.
func checkRangeOver(p *parse.PipeNode) error {
	bad := errors.New("range is allowed over the facts' own collections only (.Values, .Components, a component's .Ports)")
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return bad
	}
	var fields []string
	switch a := p.Cmds[0].Args[0].(type) {
	case *parse.FieldNode:
		fields = a.Ident
	case *parse.VariableNode:
		fields = a.Ident[1:]
	case *parse.ChainNode:
		fields = a.Field
	}
	if len(fields) == 0 {
		return bad
	}
	switch fields[len(fields)-1] {
	case "Values", "Components", "Ports":
		return nil
	}
	return bad
}

// limitedBuffer fails a write past MaxRenderedConfig, so a template that
// loops cannot exhaust memory.
type limitedBuffer struct {
	strings.Builder
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, errTooLarge
	}
	return b.Builder.Write(p)
}
