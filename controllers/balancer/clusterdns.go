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

package balancer

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
)

// ResolveClusterDNS turns the --cluster-dns flag into the DNS server the
// proxies re-resolve backends with: an IP address as given, "none" for
// none, and "auto" for the first nameserver of resolvConf when the manager
// runs in a cluster (a Pod with the default DNS policy asks the cluster
// DNS), none outside one (a host's resolver knows no Services).
func ResolveClusterDNS(flag string, inCluster bool, resolvConf string) (string, error) {
	switch flag {
	case "", "none":
		return "", nil
	case "auto":
		if !inCluster {
			return "", nil
		}
		f, err := os.Open(resolvConf)
		if err != nil {
			return "", fmt.Errorf("finding the cluster DNS: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "nameserver" && net.ParseIP(fields[1]) != nil {
				return fields[1], nil
			}
		}
		return "", fmt.Errorf("finding the cluster DNS: %s names no nameserver; set --cluster-dns", resolvConf)
	}
	if net.ParseIP(flag) == nil {
		return "", fmt.Errorf("%q is not an IP address, auto or none", flag)
	}
	return flag, nil
}
