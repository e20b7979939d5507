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

package workspace

import (
	"context"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultReadyPasswords is how many passwords Passwords keeps ready.
const DefaultReadyPasswords = 8

// Passwords keeps a few generated passwords, each with its argon2id hash,
// made ahead in the background. The hash costs about 40 ms of CPU (more
// on a busy node), and a new Workspace's Pod waits for its auth Secret:
// taken from here, the Secret is made at once. Each is handed out once;
// one made ahead is a random string nobody has, so nothing is weaker than
// making it when it is needed. When none is ready (a burst of new
// Workspaces) New makes one then.
type Passwords struct {
	ready chan map[string][]byte
}

// NewPasswords keeps n passwords ready once started.
func NewPasswords(n int) *Passwords {
	return &Passwords{ready: make(chan map[string][]byte, n)}
}

// Start makes passwords until n are ready, and again as they are taken,
// until ctx ends: a manager Runnable, on the leader, which reconciles.
func (p *Passwords) Start(ctx context.Context) error {
	for {
		v, err := NewPassword()
		if err != nil {
			logf.FromContext(ctx).Error(err, "Making a password ahead")
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		select {
		case p.ready <- v:
		case <-ctx.Done():
			return nil
		}
	}
}

// NeedLeaderElection: only the leader reconciles, so only it needs them.
func (p *Passwords) NeedLeaderElection() bool { return true }

// New is a password and its hash, as the auth Secret holds them: one made
// ahead when one is ready, else one made now. A nil Passwords makes one.
func (p *Passwords) New() (map[string][]byte, error) {
	if p != nil {
		select {
		case v := <-p.ready:
			return v, nil
		default:
		}
	}
	return NewPassword()
}
