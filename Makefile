# kubeforge Makefile. `make help` lists the targets.

VERSION ?= 0.1.0
# The manager's image as config/manager names it; make deploy puts IMG in its place.
MANAGER_IMAGE := ghcr.io/kubeforge/kubeforge
IMG ?= $(MANAGER_IMAGE):v$(VERSION)
BUNDLE_IMG ?= ghcr.io/kubeforge/kubeforge-bundle:v$(VERSION)
CATALOG_IMG ?= ghcr.io/kubeforge/kubeforge-catalog:v$(VERSION)

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

# Tools are pinned in hack/tools/go.mod and run through `go tool`.
TOOLS := go tool -modfile=$(CURDIR)/hack/tools/go.mod
CONTROLLER_GEN := $(TOOLS) controller-gen
KUSTOMIZE := $(TOOLS) kustomize

# Test binaries (etcd, kube-apiserver, ...) are built from source into a
# cache outside the repo by hack/test-binaries.sh.
BIN_DIR = $(shell hack/test-binaries.sh --print)
CLUSTER_NAME ?= kubeforge
# What make deploy installs: config/default (with cert-manager),
# config/without-cert-manager, or config/namespaced (docs/install.md).
DEPLOY_CONFIG ?= config/default
# The namespace `make run` keeps the ownership key in (outside a cluster the
# manager has no namespace of its own).
RUN_NAMESPACE ?= kube-system
KUBECONFIG_DEMO = $(shell CLUSTER_NAME=$(CLUSTER_NAME) hack/cluster.sh kubeconfig)
GO_PACKAGES = $$(go list ./... | grep -v /tests/)

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook configurations from the code markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:generateEmbeddedObjectMeta=true webhook paths="./..." output:crd:artifacts:config=config/crd/bases
	go run ./hack/crddocs config/crd/bases/*.yaml
	go run ./hack/rbacsplit config/rbac
	go run ./hack/policygen config/policy
	go run ./hack/webhookconditions config/webhook/manifests.yaml

.PHONY: proto
proto: ## Regenerate the gRPC code in internal/apiserver/idev1 and seedpb from api/proto (buf and the protoc plugins, from hack/proto/go.mod).
	cd api/proto && go tool -modfile=../../hack/proto/go.mod buf lint && go tool -modfile=../../hack/proto/go.mod buf generate

.PHONY: generate
generate: ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: verify-generated
verify-generated: ## Fail when the committed generated files are stale.
	hack/verify-generated.sh

.PHONY: verify-config
verify-config: ## Fail when a kustomize overlay in config/ does not build.
	@for d in config/default config/crd config/rbac config/webhook config/policy config/samples config/prometheus config/monitoring config/certmanager config/network-policy config/manifests; do \
		$(KUSTOMIZE) build $$d >/dev/null || { echo "kustomize build $$d failed"; exit 1; }; \
	done; echo "config/ overlays build"

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: verify-fmt
verify-fmt: ## Fail when a Go file is not gofmt'ed.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

##@ Test

# The stages of `make test`, in order; hack/stages.sh prints each one's time.
TEST_STAGES = verify-fmt verify-generated verify-config vet test-olm test-binaries test-deps test-unit node-binaries olm-binaries build test-e2e test-perf

.PHONY: test
test: ## Everything: generated-file and config checks, vet, OLM bundle checks, unit + envtest, e2e, the small performance run; each stage's time printed.
	@MAKE="$(MAKE)" hack/stages.sh $(TEST_STAGES)

.PHONY: test-binaries
test-binaries: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok from source (cached).
	hack/test-binaries.sh >/dev/null

.PHONY: test-deps
test-deps: ## Install the Debian packages the tests use as real peers (nginx, nss_wrapper, ansible, OpenSSH, MariaDB, PostgreSQL, Prometheus, chromium and the real node's), if missing (hack/test-deps.sh lists them).
	hack/test-deps.sh

.PHONY: test-unit
# -ldflags=-w: test binaries without DWARF link in ≈ 60 % of the time (stack
# traces keep their files and lines); the compiled packages are the same.
test-unit: test-binaries test-deps ## Unit and envtest (integration) tests.
	KUBEBUILDER_ASSETS="$(BIN_DIR)" go test $(GO_PACKAGES) -ldflags=-w -count=1 -timeout 20m -p 4

# E2E_LABELS picks a slice of the end-to-end specs, e.g. E2E_LABELS=podset.
E2E_LABELS ?=

.PHONY: test-e2e
test-e2e: test-binaries test-deps node-binaries olm-binaries build ## End-to-end tests: tests/e2e on a kwok cluster and tests/e2e/demo beside tests/e2e/olm (installed by real OLM), then tests/e2e/real (make deploy); each on its own cluster (OLM's and the real suite's with the real node), created and deleted by its suite.
	PATH="$(BIN_DIR):$$PATH" hack/e2e.sh $(if $(E2E_LABELS),-ginkgo.label-filter="$(E2E_LABELS)")

.PHONY: node-binaries
node-binaries: test-binaries test-deps ## Build what the real node runs (kubelet, kube-proxy, containerd, runc, CNI plugins, CoreDNS, registry) from source (cached).
	hack/node-binaries.sh >/dev/null

.PHONY: olm-binaries
olm-binaries: ## Build OLM v0.38.0 (olm, catalog, package-server, copy-content, cpb), opm, grpc_health_probe and helm from source (cached).
	hack/olm.sh binaries

.PHONY: test-perf
test-perf: test-binaries build ## The performance harness at N = 20, one run, 5 s webhook loads, so that it cannot rot (figures in tests/perf/out).
	go test ./tests/perf/ -count=1 -timeout 20m -v -args -perf.n=20 -perf.reps=1 -perf.webhook-seconds=5

.PHONY: perf
perf: test-binaries build ## The performance harness at N = 300, three runs (≈ 50 min on 2 cores with the real-node part); writes tests/perf/REPORT.md and report.json.
	go test ./tests/perf/ -count=1 -timeout 90m -v -args -perf.n=300 -perf.reps=3 -perf.report=$(CURDIR)/tests/perf

.PHONY: test-olm
test-olm: ## Check the OLM bundle and catalog: up to date with config/, operator-framework's validators, scorecard's static checks, opm validate.
	cd hack/olm && go vet ./... && VERSION=$(VERSION) IMG=$(IMG) BUNDLE_IMG=$(BUNDLE_IMG) go test ./... -count=1

.PHONY: fuzz
fuzz: ## Run each fuzz test for 30s.
	go test ./internal/validation/ -run '^$$' -fuzz FuzzRawQuantityErrors -fuzztime 30s
	go test ./internal/validation/ -run '^$$' -fuzz FuzzPodSet -fuzztime 30s
	go test ./internal/validation/ -run '^$$' -fuzz FuzzPlatform -fuzztime 30s
	go test ./internal/validation/ -run '^$$' -fuzz FuzzBalancer -fuzztime 30s
	go test ./internal/validation/ -run '^$$' -fuzz FuzzWorkspace -fuzztime 30s
	go test ./internal/validation/ -run '^$$' -fuzz FuzzKubernetesCluster -fuzztime 30s

##@ Build

.PHONY: build
build: ## Build the manager (bin/manager) and the kubectl plugin (bin/kubectl-kubeforge: copy it onto PATH for `kubectl kubeforge`).
	go build -o bin/ ./cmd/manager ./cmd/kubectl-kubeforge

.PHONY: plugin-dist
plugin-dist: ## Build `kubectl kubeforge` archives for linux and darwin (amd64, arm64) into dist/ and its krew manifest dist/kubeforge.yaml (VERSION, URL_BASE).
	VERSION="v$(VERSION)" URL_BASE="$(URL_BASE)" hack/krew.sh

.PHONY: run
run: manifests generate ## Run the manager here against the current kubeconfig, without webhooks (objects that need an admission stamp report NotAdmitted: docs/security.md); its ownership key in RUN_NAMESPACE.
	go run ./cmd/manager --enable-webhooks=false --metrics-bind-address=0 --ownership-key-namespace=$(RUN_NAMESPACE)

.PHONY: docker-build
docker-build: ## Build the manager image (needs a Docker engine).
	docker build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image IMG (needs a Docker engine).
	docker push $(IMG)

.PHONY: image
image: ## Build the manager image IMG without Docker and push it to the local cluster's registry (needs REAL_NODE=1 make cluster-up).
	IMG=$(IMG) VERSION=$(VERSION) hack/images.sh manager

##@ OLM

# The bundle is generated by the project's own generator (hack/olm, its own
# Go module) on every machine, operator-sdk or not, so that the committed
# bundle is reproducible and `make test` can insist on it.
# An upgrade release names the CSV it replaces and the catalog published
# before: make bundle REPLACES=kubeforge.v0.1.0 PREVIOUS_CATALOG=old/catalog.yaml
OLM_GENERATE = cd hack/olm && go run ./cmd/bundle --root ../.. --version $(VERSION) --image $(IMG) --bundle-image $(BUNDLE_IMG) \
	$(if $(REPLACES),--replaces $(REPLACES)) $(if $(PREVIOUS_CATALOG),--previous-catalog $(abspath $(PREVIOUS_CATALOG)))

.PHONY: bundle
bundle: manifests ## Generate bundle/ (CSV, CRDs, metadata, scorecard config), bundle.Dockerfile and catalog/ from config/.
	$(OLM_GENERATE)

.PHONY: catalog
catalog: bundle ## Render the file-based catalog catalog/kubeforge/catalog.yaml (with the bundle, as make bundle does).

.PHONY: bundle-build
bundle-build: bundle ## Build the bundle image BUNDLE_IMG (needs a container engine).
	docker build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-image
bundle-image: ## Build the bundle image BUNDLE_IMG from bundle/ without Docker and push it to the local cluster's registry (REAL_NODE=1 make cluster-up).
	BUNDLE_IMG=$(BUNDLE_IMG) hack/olm.sh bundle-image

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG.
	docker push $(BUNDLE_IMG)

.PHONY: catalog-build
catalog-build: catalog ## Build the catalog image CATALOG_IMG (needs a container engine).
	docker build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-image
catalog-image: ## Build the catalog image CATALOG_IMG from catalog/ without Docker (opm serving it) and push it to the local cluster's registry.
	CATALOG_IMG=$(CATALOG_IMG) hack/olm.sh catalog-image

.PHONY: olm-install
olm-install: ## Install OLM, built from source, into the local cluster with a real node (its images pushed to the node's registry).
	hack/olm.sh images install

.PHONY: run-bundle
run-bundle: ## Install BUNDLE_IMG through OLM as `operator-sdk run bundle` does (operator-sdk if installed, else its steps by hack/olm.sh); NAMESPACE defaults to kubeforge-run-bundle.
	@if command -v operator-sdk >/dev/null; then \
		operator-sdk run bundle $(BUNDLE_IMG) --namespace $(or $(NAMESPACE),kubeforge-run-bundle); \
	else \
		BUNDLE_IMG=$(BUNDLE_IMG) NAMESPACE=$(or $(NAMESPACE),kubeforge-run-bundle) hack/olm.sh run-bundle; \
	fi

.PHONY: catalog-push
catalog-push: ## Push the catalog image CATALOG_IMG.
	docker push $(CATALOG_IMG)

##@ Local cluster

.PHONY: cluster-up
cluster-up: test-binaries ## Start a local control plane (kwok) and print its kubeconfig path; REAL_NODE=1 adds a real node, its registry and cluster DNS.
	@CLUSTER_NAME=$(CLUSTER_NAME) hack/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop and delete the local control plane.
	@CLUSTER_NAME=$(CLUSTER_NAME) hack/cluster.sh down

.PHONY: demo
demo: build ## A local cluster with a real node, kubeforge deployed in it and the samples on real containers (FAKE_NODES=1, or a machine that cannot host the real node: kwok only); ends with what to try.
	CLUSTER_NAME=$(CLUSTER_NAME) FAKE_NODES=$(FAKE_NODES) hack/demo.sh up

.PHONY: demo-down
demo-down: ## Delete the demo's cluster (and its real node, or the kwok-only demo's manager): the machine as it was.
	CLUSTER_NAME=$(CLUSTER_NAME) hack/demo.sh down

##@ Deployment

.PHONY: install
install: manifests ## Install the CRDs into the current cluster.
	$(KUSTOMIZE) build config/crd | kubectl apply --server-side -f -

.PHONY: uninstall
uninstall: manifests ## Remove the CRDs from the current cluster.
	$(KUSTOMIZE) build config/crd | kubectl delete --ignore-not-found -f -

.PHONY: deploy
# deploy sets IMG in a kustomization of its own over DEPLOY_CONFIG (under
# bin/, deleted after), so that config/ stays as committed.
deploy: manifests ## Deploy the operator into the current cluster; IMG names the image, DEPLOY_CONFIG the kustomization (docs/install.md). Monitoring: make deploy-monitoring.
	@mkdir -p bin; overlay=$$(mktemp -d "$(CURDIR)/bin/deploy.XXXXXX"); trap 'rm -rf "$$overlay"' EXIT; \
	printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- %s\n' "$$(realpath --relative-to="$$overlay" "$(DEPLOY_CONFIG)")" >"$$overlay/kustomization.yaml"; \
	(cd "$$overlay" && $(KUSTOMIZE) edit set image $(MANAGER_IMAGE)=$(IMG)); \
	$(KUSTOMIZE) build "$$overlay" | kubectl apply --server-side --force-conflicts -f -

.PHONY: deploy-monitoring
deploy-monitoring: ## Add the ServiceMonitor and alert rules to a `make deploy` install (needs prometheus-operator's CRDs).
	$(KUSTOMIZE) build config/monitoring | kubectl apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove the operator (and its ServiceMonitor and rules, where prometheus-operator's CRDs are served) from the current cluster.
	@if kubectl get crd servicemonitors.monitoring.coreos.com >/dev/null 2>&1; then \
		$(KUSTOMIZE) build config/monitoring | kubectl delete --ignore-not-found -f -; \
	fi
	$(KUSTOMIZE) build $(DEPLOY_CONFIG) | kubectl delete --ignore-not-found -f -
