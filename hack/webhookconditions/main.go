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

// Command webhookconditions gives every webhook of the webhook
// configurations controller-gen wrote (config/webhook/manifests.yaml) the
// matchConditions of internal/admit (admit.MatchConditions): `make
// manifests` runs it after controller-gen, and the generated-file check
// keeps the two the same.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubeforge/kubeforge/internal/admit"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: webhookconditions <config/webhook/manifests.yaml>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "webhookconditions:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		doc = strings.TrimPrefix(strings.TrimSpace(doc), "---")
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return err
		}
		var mutating bool
		switch obj["kind"] {
		case "MutatingWebhookConfiguration":
			mutating = true
		case "ValidatingWebhookConfiguration":
		default:
			return fmt.Errorf("unexpected kind %v", obj["kind"])
		}
		webhooks, _ := obj["webhooks"].([]any)
		for _, w := range webhooks {
			if wh, ok := w.(map[string]any); ok {
				wh["matchConditions"] = admit.MatchConditions(mutating)
			}
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}
