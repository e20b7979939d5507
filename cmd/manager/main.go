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

// Command manager runs the kubeforge operator: the controllers of every
// kind, their admission webhooks, metrics and health probes, with leader
// election.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"golang.org/x/time/rate"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/balancer"
	"github.com/kubeforge/kubeforge/controllers/kubernetescluster"
	"github.com/kubeforge/kubeforge/controllers/platform"
	"github.com/kubeforge/kubeforge/controllers/podset"
	"github.com/kubeforge/kubeforge/controllers/workspace"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/apiserver"
	"github.com/kubeforge/kubeforge/internal/certs"
	"github.com/kubeforge/kubeforge/internal/engine"
	kfmetrics "github.com/kubeforge/kubeforge/internal/metrics"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/validation"
	appswebhooks "github.com/kubeforge/kubeforge/webhooks/apps/v1alpha1"
	clusterwebhooks "github.com/kubeforge/kubeforge/webhooks/cluster/v1alpha1"
	idewebhooks "github.com/kubeforge/kubeforge/webhooks/ide/v1alpha1"
	networkingwebhooks "github.com/kubeforge/kubeforge/webhooks/networking/v1alpha1"
)

var setupLog = ctrl.Log.WithName("setup")

// splitList is the non-empty, trimmed items of a comma-separated flag.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// hasCertManager reports whether cert-manager's Certificate API is served.
// Workspaces create Certificates only then; the manager must be restarted
// to notice cert-manager installed later.
func hasCertManager(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	resources, err := dc.ServerResourcesForGroupVersion(cmv1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", cmv1.SchemeGroupVersion, err)
	}
	for _, r := range resources.APIResources {
		if r.Kind == cmv1.CertificateKind {
			return true, nil
		}
	}
	return false, nil
}

// kind wires one kubeforge kind into the manager: its controller, the
// types it owns and reads (which the cache holds only with kubeforge's
// label), and its webhooks.
type kind struct {
	name       string
	object     client.Object
	types      engine.Types
	controller func(ctrl.Manager, *engine.Engine) error
	webhooks   func(ctrl.Manager, admit.Options) error
}

// cachedTypes are the types every kind owns or reads, once each.
func cachedTypes(ks []kind) []client.Object {
	var ts []engine.Types
	for _, k := range ks {
		ts = append(ts, k.types)
	}
	return engine.Cached(ts...)
}

// apiURL is where installers reach the API server (--api-advertise-url).
// apiCAFile is the CA of the API's certificate, handed to installers.
func kinds(clusterDomain, clusterDNS string, certManager bool, apiURL, apiCAFile string, installerPolicy validation.ImagePolicy, workspaceAllow []string,
	policy validation.Policy) []kind {
	return []kind{
		{
			name:   "PodSet",
			object: &appsv1alpha1.PodSet{},
			types:  podset.Types,
			controller: func(mgr ctrl.Manager, eng *engine.Engine) error {
				return (&podset.Reconciler{Client: mgr.GetClient(), Engine: eng}).SetupWithManager(mgr)
			},
			webhooks: appswebhooks.SetupPodSetWebhookWithManager,
		},
		{
			name:   "Platform",
			object: &appsv1alpha1.Platform{},
			types:  platform.Types(certManager),
			controller: func(mgr ctrl.Manager, eng *engine.Engine) error {
				return (&platform.Reconciler{Client: mgr.GetClient(), APIReader: eng.Reader, Engine: eng, CertManager: certManager,
					Policy: policy}).SetupWithManager(mgr)
			},
			webhooks: appswebhooks.SetupPlatformWebhookWithManager,
		},
		{
			name:   "KubernetesCluster",
			object: &clusterv1alpha1.KubernetesCluster{},
			types:  kubernetescluster.Types,
			controller: func(mgr ctrl.Manager, eng *engine.Engine) error {
				return (&kubernetescluster.Reconciler{Client: mgr.GetClient(), APIReader: eng.Reader, Engine: eng, CallbackURL: apiURL, CallbackCAFile: apiCAFile,
					InstallerImages: installerPolicy}).SetupWithManager(mgr)
			},
			webhooks: clusterwebhooks.SetupKubernetesClusterWebhookWithManager,
		},
		{
			name:   "Balancer",
			object: &networkingv1alpha1.Balancer{},
			types:  balancer.Types,
			controller: func(mgr ctrl.Manager, eng *engine.Engine) error {
				return (&balancer.Reconciler{Client: mgr.GetClient(), Engine: eng, ClusterDomain: clusterDomain, ClusterDNS: clusterDNS}).SetupWithManager(mgr)
			},
			webhooks: networkingwebhooks.SetupBalancerWebhookWithManager,
		},
		{
			name:   "Workspace",
			object: &idev1alpha1.Workspace{},
			types:  workspace.Types(certManager),
			controller: func(mgr ctrl.Manager, eng *engine.Engine) error {
				return (&workspace.Reconciler{Client: mgr.GetClient(), Engine: eng,
					Options: workspace.Options{CertManager: certManager, AllowFrom: workspaceAllow, Policy: policy}}).SetupWithManager(mgr)
			},
			webhooks: idewebhooks.SetupWorkspaceWebhookWithManager,
		},
	}
}

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

func main() {
	var (
		metricsAddr, probeAddr                    string
		metricsCertPath, webhookCertPath          string
		certName, keyName                         string
		leaderElectionID, leaderElectionNamespace string
		enableLeaderElection, secureMetrics       bool
		enableHTTP2, enableWebhooks               bool
		webhookPort, maxConcurrentReconciles      int
		kubeAPIQPS                                float64
		kubeAPIBurst                              int
		clusterDomain                             string
		clusterDNS                                string
		leaseDuration, renewDeadline, retryPeriod time.Duration
		apiAddr, apiCertPath, apiAdvertiseURL     string
		apiAudience                               string
		apiMaxWaits, apiMaxStreams, apiTokenBurst int
		apiMaxWaitsTotal, apiMaxStreamsTotal      int
		apiTokenRate                              float64
		installerImages                           string
		perKindConcurrency                        string
		cacheSettings                             engine.CacheSettings
		ownershipKeyNamespace, ownershipKeyName   string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or 0 to disable the metrics endpoint.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	pprofAddr := flag.String("pprof-bind-address", "0", "The address Go's profiler (/debug/pprof) binds to; \"0\" (the default) serves none. "+
		"It is unauthenticated: bind it to loopback.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Enable leader election for the controller manager, so that only one replica reconciles at a time.")
	flag.StringVar(&leaderElectionID, "leader-election-id", "kubeforge.kubeforge.io", "The name of the leader election Lease.")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "",
		"The namespace of the leader election Lease. Defaults to the namespace the manager runs in.")
	flag.DurationVar(&leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long followers wait after the leader's last renewal before taking the Lease: the longest a killed leader goes unreplaced.")
	flag.DurationVar(&renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader keeps trying to renew the Lease before it steps down (and exits): the longest API server outage it rides out.")
	flag.DurationVar(&retryPeriod, "leader-elect-retry-period", 2*time.Second,
		"How often replicas try to acquire or renew the Lease.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, authenticated and authorised through the Kubernetes API. Use --metrics-secure=false for HTTP.")
	flag.StringVar(&webhookCertPath, "webhook-cert-path", "", "The directory that contains the webhook certificate.")
	webhookClientCA := flag.String("webhook-client-ca", "",
		"A CA bundle (a path, or a file name in --webhook-cert-path): the webhook server then takes requests only from a client "+
			"with a certificate it signed — the API server, configured to present one (docs/security.md). Empty: any client that reaches the port.")
	webhookDrain := flag.Duration("webhook-drain-time", 0,
		"How long the webhook server goes on answering once the manager is told to stop, each answer closing its connection, "+
			"so that the API server never sends a request on a connection the server is closing (the manifests set 2s, "+
			"within the Pod's termination grace period). The Lease is released after it. 0: shut down at once.")
	flag.StringVar(&metricsCertPath, "metrics-cert-path", "",
		"The directory that contains the metrics server certificate. A self-signed one is generated when empty.")
	flag.StringVar(&certName, "cert-name", "tls.crt", "The certificate file name in the cert directories.")
	flag.StringVar(&keyName, "cert-key", "tls.key", "The key file name in the cert directories.")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "The port the webhook server listens on.")
	flag.BoolVar(&enableWebhooks, "enable-webhooks", true, "Serve the admission webhooks.")
	flag.IntVar(&maxConcurrentReconciles, "max-concurrent-reconciles", 4,
		"How many objects of one kind are reconciled at the same time.")
	flag.StringVar(&perKindConcurrency, "max-concurrent-reconciles-per-kind", defaultKindConcurrency,
		"Per-kind overrides of --max-concurrent-reconciles, e.g. PodSet=8,Balancer=2. "+
			"Workspaces get 8 by default: each new one is a person waiting, and a burst of starts would queue behind 4.")
	stripManagedFields := flag.Bool("cache-strip-managed-fields", true,
		"Drop metadata.managedFields from cached objects (memory). Turn off only to measure what it saves.")
	labelFilter := flag.Bool("cache-label-filter", true,
		"Cache owned types (Deployments, Secrets, ...) only when labelled app.kubernetes.io/managed-by=kubeforge (memory). "+
			"Turn off only to measure what it saves.")
	flag.Float64Var(&kubeAPIQPS, "kube-api-qps", 50, "Queries per second the manager may send to the API server.")
	flag.IntVar(&kubeAPIBurst, "kube-api-burst", 100, "Burst of queries the manager may send to the API server.")
	flag.StringVar(&clusterDomain, "cluster-domain", balancer.DefaultClusterDomain,
		"The cluster's DNS domain; Balancer proxies reach backend Services by <service>.<namespace>.svc.<domain>.")
	flag.StringVar(&clusterDNS, "cluster-dns", "auto",
		"The cluster DNS server Balancer proxies ask again for backend Services' addresses while they run (nginx 1.27.3+), "+
			"so a recreated backend Service gets traffic without a proxy restart. auto: the manager's own nameserver when it runs "+
			"in a cluster (none outside); none: proxies resolve backends once, at start.")
	workspaceAllow := flag.String("workspace-allow-namespaces", "ingress-nginx",
		"Comma-separated namespaces whose Pods may reach Workspace IDEs (each Workspace's NetworkPolicy): the ingress "+
			"controller's, and any other the administrator allows. Empty: no Pod may.")
	flag.StringVar(&apiAddr, "api-bind-address", ":8082",
		"The address of the REST and gRPC API (one HTTPS port, HTTP/2 for gRPC); 0 turns it off.")
	flag.StringVar(&apiAudience, "api-token-audience", apiserver.DefaultAudience,
		"The audience the API's bearer tokens must be issued for, e.g. kubectl create token SA --audience kubeforge.")
	flag.StringVar(&apiCertPath, "api-cert-path", "",
		"The directory with tls.crt, tls.key and ca.crt for the API (reloaded when they change; ca.crt is handed to installers). "+
			"When empty the manager makes and renews one itself (--api-cert-secret); outside a cluster, a self-signed one for localhost.")
	flag.StringVar(&apiAdvertiseURL, "api-advertise-url", "",
		"The URL at which installer Jobs reach the API, e.g. https://kubeforge-api.kubeforge-system.svc:8082, for their callbacks.")
	flag.IntVar(&apiMaxWaits, "api-max-waits-per-caller", apiserver.DefaultMaxWaitsPerCaller,
		"The create-and-wait calls one caller may hold open at once; more are refused with RESOURCE_EXHAUSTED.")
	flag.IntVar(&apiMaxStreams, "api-max-log-streams-per-caller", apiserver.DefaultMaxStreamsPerCaller,
		"The followed installer log streams one caller may hold open at once; more are refused with 429.")
	flag.IntVar(&apiMaxWaitsTotal, "api-max-waits", apiserver.DefaultMaxWaits,
		"The create-and-wait calls all callers together may hold open at once; more are refused with RESOURCE_EXHAUSTED.")
	flag.IntVar(&apiMaxStreamsTotal, "api-max-log-streams", apiserver.DefaultMaxStreams,
		"The followed installer log streams all callers together may hold open at once; more are refused with 429.")
	flag.Float64Var(&apiTokenRate, "api-unknown-token-reviews-per-second", apiserver.DefaultReviewsPerSecond,
		"TokenReviews per second one client address may cause with tokens the API has not seen; past the burst, 429.")
	flag.IntVar(&apiTokenBurst, "api-unknown-token-review-burst", apiserver.DefaultReviewBurst,
		"The burst of --api-unknown-token-reviews-per-second.")
	flag.StringVar(&installerImages, "installer-images", strings.Join(validation.DefaultInstallerImages, ","),
		"The installer images KubernetesClusters may run, comma-separated: repositories (any tag or digest) or prefixes ending in /*; "+
			"* allows every image. An installer mounts an SSH key to every host of a cluster, so only images the administrator trusts.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics and webhook servers (off by default: HTTP/2 Stream Cancellation and Rapid Reset CVEs).")
	flag.StringVar(&ownershipKeyNamespace, "ownership-key-namespace", "",
		"The namespace of the Secret holding the key that seals the objects kubeforge makes (docs/security.md). "+
			"Defaults to the namespace the manager runs in ($POD_NAMESPACE), else --leader-election-namespace.")
	flag.StringVar(&ownershipKeyName, "ownership-key-secret", proof.DefaultSecretName,
		"The name of that Secret; the first replica to start creates it, every replica reads it.")
	ingressHosts := flag.String("ingress-hosts", "",
		"Comma-separated host patterns the Ingresses of Workspaces and Platforms may use: exact hosts, or *.example.com for any "+
			"name under example.com. Empty: any host (each requester still needs the right to create Ingresses).")
	wildcardHosts := flag.String("ingress-wildcard-hosts", "",
		"Comma-separated wildcard hosts (*.team-a.example.com) the Ingresses of Workspaces and Platforms may use, each exactly as listed, "+
			"when --ingress-hosts is set: its patterns grant names, not wildcards (a wildcard serves every unclaimed name under it, and its "+
			"certificate is valid for every other tenant's host there). Empty: none.")
	ingressIssuers := flag.String("ingress-issuers", "",
		"Comma-separated cert-manager issuers the Certificates of Workspaces and Platforms may come from, as Kind/name "+
			"(ClusterIssuer/letsencrypt, Issuer/internal-ca). Empty: any issuer (each requester still needs the right to create Certificates).")
	anonymousIngress := flag.Bool("workspace-allow-anonymous-ingress", false,
		"Allow a Workspace with auth.mode None to have an Ingress: anyone who reaches its host gets a shell in the IDE.")
	watchNamespaces := flag.String("watch-namespaces", os.Getenv("WATCH_NAMESPACE"),
		"Comma-separated namespaces kubeforge serves: its cache, its informers and its clients hold only these, and it neither "+
			"reads nor writes namespaced objects elsewhere (docs/install.md). Empty: every namespace. Defaults to $WATCH_NAMESPACE, "+
			"which OLM sets to the OperatorGroup's target namespaces.")
	apiCert := certFlags("api", "the API's", "Without --api-cert-path")
	certValidity := flag.Duration("cert-validity", 90*24*time.Hour,
		"How long each serving certificate the manager makes (the API's without --api-cert-path, the webhooks' with --webhook-cert-provision) is valid.")
	certRenewBefore := flag.Duration("cert-renew-before", 30*24*time.Hour, "How long before its end such a certificate is replaced.")
	caValidity := flag.Duration("ca-validity", 10*365*24*time.Hour, "How long the CA of such certificates is valid.")
	webhookProvision := flag.Bool("webhook-cert-provision", false,
		"Make and renew the webhooks' certificate (installs without cert-manager or OLM, config/without-cert-manager): kept in the Secret "+
			"--webhook-cert-secret, its CA injected into the two webhook configurations and published in the ConfigMap --webhook-ca-configmap.")
	webhookCert := certFlags("webhook", "the webhooks'", "With --webhook-cert-provision")
	mutatingConfig := flag.String("mutating-webhook-configuration", "kubeforge-mutating-webhook-configuration",
		"With --webhook-cert-provision: the MutatingWebhookConfiguration whose caBundle the manager keeps.")
	validatingConfig := flag.String("validating-webhook-configuration", "kubeforge-validating-webhook-configuration",
		"With --webhook-cert-provision: the ValidatingWebhookConfiguration whose caBundle the manager keeps.")
	reviewCacheTTL := flag.Duration("access-review-cache-ttl", admit.DefaultReviewCacheTTL,
		"How long the webhooks keep an allowed answer of the SubjectAccessReviews they ask about what a spec names "+
			"(a refusal is never kept, so a right taken away counts within this time, one granted at once); 0 asks every time.")
	ensurePolicy := flag.Bool("ensure-admission-policy", false,
		"Create or update the ValidatingAdmissionPolicies kubeforge-owner-record and kubeforge-references-<kind> and their bindings "+
			"at start (under OLM, whose bundle cannot carry them; kustomize installs ship them in config/policy).")
	opts := zap.Options{Development: false}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	cacheSettings.KeepManagedFields, cacheSettings.AllOwnedTypeObjects = !*stripManagedFields, !*labelFilter

	var tlsOpts []func(*tls.Config)
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	webhookOpts := webhook.Options{Port: webhookPort, TLSOpts: tlsOpts, ClientCAName: *webhookClientCA}
	if *webhookProvision {
		webhookCertPath = *webhookCert.dir
	}
	if webhookCertPath != "" {
		setupLog.Info("Using webhook certificate", "path", filepath.Join(webhookCertPath, certName))
		webhookOpts.CertDir, webhookOpts.CertName, webhookOpts.KeyName = webhookCertPath, certName, keyName
		if *webhookProvision {
			// The files internal/certs writes.
			webhookOpts.CertName, webhookOpts.KeyName = certs.CertFile, certs.KeyFile
		}
	}

	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: secureMetrics, TLSOpts: tlsOpts}
	if secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if metricsCertPath != "" {
		setupLog.Info("Using metrics certificate", "path", filepath.Join(metricsCertPath, certName))
		metricsOpts.CertDir, metricsOpts.CertName, metricsOpts.KeyName = metricsCertPath, certName, keyName
	}

	// controller-runtime's server with an idle timeout longer than the API
	// server's, so that a request never meets a connection being closed.
	webhookServer := admit.NewWebhookServer(webhookOpts)
	admit.Drain(webhookServer, *webhookDrain)
	if *webhookProvision {
		// The certificate comes a moment after start (internal/certs).
		webhookServer = certs.WaitingWebhookServer(webhookServer, webhookCertPath)
	}

	restConfig := ctrl.GetConfigOrDie()
	restConfig.QPS, restConfig.Burst = float32(kubeAPIQPS), kubeAPIBurst
	certManager, err := hasCertManager(restConfig)
	if err != nil {
		setupLog.Error(err, "Unable to discover cert-manager")
		os.Exit(1)
	}
	setupLog.Info("Discovered cert-manager", "certificates", certManager)

	sch := scheme.New()
	installerPolicy := validation.ImagePolicy(splitList(installerImages))
	if len(installerPolicy) == 0 {
		setupLog.Error(nil, "--installer-images is empty: name the installer images to allow, or * for any")
		os.Exit(1)
	}
	// The API's certificate: cert-manager's (--api-cert-path), else the
	// manager's own, in its namespace (internal/certs), else — only
	// outside a cluster — a self-signed one for localhost, said loudly.
	ownNS := ownNamespace(leaderElectionNamespace)
	provisionAPICert := apiAddr != "0" && apiCertPath == "" && ownNS != "" && inCluster()
	if provisionAPICert {
		apiCertPath = *apiCert.dir
	} else if apiAddr != "0" && apiCertPath == "" {
		setupLog.Info("WARNING: the API serves a self-signed certificate for localhost: no --api-cert-path, and the manager runs " +
			"outside a cluster, with no Service to make a certificate for. Only for trying things: callers cannot verify it.")
	}
	apiCAFile := ""
	if apiCertPath != "" {
		apiCAFile = filepath.Join(apiCertPath, "ca.crt")
	}
	if clusterDNS, err = balancer.ResolveClusterDNS(clusterDNS, inCluster(), "/etc/resolv.conf"); err != nil {
		setupLog.Error(err, "--cluster-dns")
		os.Exit(1)
	}
	scope, err := engine.NewScope(splitList(*watchNamespaces))
	if err != nil {
		setupLog.Error(err, "--watch-namespaces")
		os.Exit(1)
	}
	scope = scope.WithOwn(ownNamespace(leaderElectionNamespace))
	cacheSettings.Scope = scope
	setupLog.Info("Serving", "namespaces", scope.String())
	allowFrom := splitList(*workspaceAllow)
	for _, ns := range allowFrom {
		if msgs := utilvalidation.IsDNS1123Label(ns); len(msgs) > 0 {
			setupLog.Error(errors.New(strings.Join(msgs, "; ")), "--workspace-allow-namespaces: not a namespace name", "namespace", ns)
			os.Exit(1)
		}
	}
	policy := validation.Policy{IngressHosts: splitList(*ingressHosts), WildcardHosts: splitList(*wildcardHosts), Issuers: splitList(*ingressIssuers), AnonymousIngress: *anonymousIngress}
	ks := kinds(clusterDomain, clusterDNS, certManager, apiAdvertiseURL, apiCAFile, installerPolicy, allowFrom, policy)
	concurrency, err := kindConcurrency(perKindConcurrency, ks, sch)
	if err != nil {
		setupLog.Error(err, "Invalid --max-concurrent-reconciles-per-kind")
		os.Exit(1)
	}

	keys, err := loadOwnershipKey(restConfig, sch, ownershipKeyNamespace, leaderElectionNamespace, ownershipKeyName)
	if err != nil {
		setupLog.Error(err, "Unable to load the ownership key")
		os.Exit(1)
	}
	if *ensurePolicy {
		if err := ensureAdmissionPolicy(restConfig, sch); err != nil {
			setupLog.Error(err, "Unable to create the admission policy")
			os.Exit(1)
		}
	}
	var kindTypes []engine.Types
	for _, k := range ks {
		kindTypes = append(kindTypes, k.types)
	}
	cacheSettings.Transform = engine.CacheTransform(keys, sch, kindTypes...)

	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                  sch,
		Metrics:                 metricsOpts,
		WebhookServer:           webhookServer,
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        *pprofAddr,
		LeaderElection:          enableLeaderElection,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: leaderElectionNamespace,
		LeaseDuration:           &leaseDuration,
		RenewDeadline:           &renewDeadline,
		RetryPeriod:             &retryPeriod,
		// Step down at once on SIGTERM, so a new leader takes over quickly.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         engine.CacheOptions(cacheSettings, cachedTypes(ks)...),
		// ConfigMaps and Secrets: metadata in the cache, content read by name.
		NewCache: func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
			c, err := cache.New(config, opts)
			return engine.GuardCache(c), err
		},
		Client: engine.ClientOptions(),
		// Namespaced requests outside the served namespaces are refused
		// before they leave the process (engine.Scope).
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.New(config, options)
			if err != nil {
				return nil, err
			}
			return scope.Client(engine.MetadataFromCache(c, options)), nil
		},
		Controller: config.Controller{MaxConcurrentReconciles: maxConcurrentReconciles, GroupKindConcurrency: concurrency},
	})
	if err != nil {
		setupLog.Error(err, "Unable to create manager")
		os.Exit(1)
	}

	// Every part of the manager (the reconcilers through eng.Reader) reads
	// the API server through this reader, scoped as the client is.
	apiReader := scope.Reader(mgr.GetAPIReader(), mgr.GetClient())
	// The webhooks' SubjectAccessReviews go out on a client of their own,
	// without the reconcilers' client-side rate limit: their number is
	// bounded by the admission requests the API server sends (and its
	// priority and fairness), and an admission request must not queue
	// behind the reconcilers' writes.
	reviewsConfig := rest.CopyConfig(restConfig)
	reviewsConfig.QPS = -1
	reviews, err := client.New(reviewsConfig, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		setupLog.Error(err, "Unable to create the webhooks' access review client")
		os.Exit(1)
	}
	eng := &engine.Engine{Client: mgr.GetClient(), Reader: apiReader, Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("kubeforge"),
		Proof: keys, Premade: loadPremade(mgr, keys, keyNamespace(ownershipKeyNamespace, leaderElectionNamespace), scope, kindTypes)}
	for _, k := range ks {
		if err := k.controller(mgr, eng); err != nil {
			setupLog.Error(err, "Unable to create controller", "controller", k.name)
			os.Exit(1)
		}
		if enableWebhooks {
			if err := k.webhooks(mgr, admit.Options{Proof: keys, Policy: policy, InstallerImages: installerPolicy, Reader: apiReader, Reviews: reviews, ReviewCacheTTL: *reviewCacheTTL}); err != nil {
				setupLog.Error(err, "Unable to create webhook", "webhook", k.name)
				os.Exit(1)
			}
		}
	}
	// The reconcilers act only on what admission stamped; what was stored
	// before stamps is stamped once, on the leader (admit.StampStored).
	stampers := []admit.Stamper{}
	for _, k := range ks {
		if st := admit.StamperFor(sch, k.object); st != nil {
			stampers = append(stampers, st)
		}
	}
	if err := mgr.Add(admit.StampStored{Client: mgr.GetClient(), Reader: apiReader, Scheme: sch, Keys: keys,
		Namespace: keyNamespace(ownershipKeyNamespace, leaderElectionNamespace), KeySecret: ownershipKeyName, Kinds: stampers}); err != nil {
		setupLog.Error(err, "Unable to add the one-time stamping of stored objects")
		os.Exit(1)
	}

	// kubeforge's own metrics, next to controller-runtime's. Every replica
	// serves them; the per-object ones read this replica's cache.
	if err := kfmetrics.Register(ctrlmetrics.Registry, mgr.GetCache()); err != nil {
		setupLog.Error(err, "Unable to register metrics")
		os.Exit(1)
	}

	// The certificates the manager makes itself (internal/certs).
	var provisions []certs.Options
	serviceNames := func(svc string) []string {
		return []string{svc + "." + ownNS + ".svc", svc, svc + "." + ownNS, svc + "." + ownNS + ".svc." + clusterDomain}
	}
	if provisionAPICert {
		provisions = append(provisions, apiCert.options("api", serviceNames))
	}
	if *webhookProvision {
		if ownNS == "" {
			setupLog.Error(nil, "--webhook-cert-provision needs the manager's namespace (POD_NAMESPACE)")
			os.Exit(1)
		}
		o := webhookCert.options("webhook", serviceNames)
		o.Webhooks = []certs.Webhook{{Name: *mutatingConfig, Mutating: true}, {Name: *validatingConfig}}
		provisions = append(provisions, o)
	}
	if len(provisions) > 0 {
		direct, err := client.New(restConfig, client.Options{Scheme: sch})
		if err != nil {
			setupLog.Error(err, "Unable to create a client")
			os.Exit(1)
		}
		for _, o := range provisions {
			o.Namespace, o.Validity, o.RenewBefore, o.CAValidity = ownNS, *certValidity, *certRenewBefore, *caValidity
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err = certs.Provision(ctx, mgr, direct, o)
			cancel()
			if err != nil {
				setupLog.Error(err, "Unable to provision a certificate", "for", o.Name)
				os.Exit(1)
			}
			setupLog.Info("Serving a certificate the manager makes and renews", "for", o.Name, "secret", ownNS+"/"+o.Secret,
				"ca", ownNS+"/"+o.CAConfigMap)
		}
	}

	if apiAddr != "0" {
		clientset, err := kubernetes.NewForConfig(restConfig)
		if err != nil {
			setupLog.Error(err, "Unable to create a clientset")
			os.Exit(1)
		}
		api := &apiserver.Server{
			Addr: apiAddr, CertDir: apiCertPath,
			Client: mgr.GetClient(), APIReader: apiReader, Cache: mgr.GetCache(), Clientset: clientset,
			ClientFor: scopedClients(scope, apiserver.ImpersonatingClients(restConfig, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})),
			Recorder:  mgr.GetEventRecorder("kubeforge-api"),
			Auth: &apiserver.Auth{Client: mgr.GetClient(), TTL: 5 * time.Second, Audience: apiAudience, Serves: scope.Serves,
				ReviewsPerSecond: rate.Limit(apiTokenRate), ReviewBurst: apiTokenBurst},
			HandlerTimeout: 30 * time.Second, WaitTimeout: 10 * time.Minute,
			MaxWaitsPerCaller: apiMaxWaits, MaxStreamsPerCaller: apiMaxStreams,
			MaxWaits: apiMaxWaitsTotal, MaxStreams: apiMaxStreamsTotal,
			WorkspaceStatus: workspace.StatusWith(eng.Owns), Owns: eng.Owns, Proof: keys,
		}
		if err := mgr.Add(api); err != nil {
			setupLog.Error(err, "Unable to add the API server")
			os.Exit(1)
		}
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "Unable to set up health check")
		os.Exit(1)
	}
	readyz := healthz.Ping
	if enableWebhooks {
		readyz = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", readyz); err != nil {
		setupLog.Error(err, "Unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "Problem running manager")
		os.Exit(1)
	}
}

// scopedClients makes the API's clients that act as its callers refuse
// namespaces outside the scope too.
func scopedClients(scope engine.Scope, clientFor func(*apiserver.User) (client.Client, error)) func(*apiserver.User) (client.Client, error) {
	return func(u *apiserver.User) (client.Client, error) {
		c, err := clientFor(u)
		if err != nil {
			return nil, err
		}
		return scope.Client(c), nil
	}
}

// inCluster reports whether the manager runs in a Pod: the kubelet gives
// every container the kubernetes Service's address.
func inCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;create;update;patch

// ensureAdmissionPolicy applies the admission policies and their
// bindings: the owner record's and the references' (admit.Policies).
func ensureAdmissionPolicy(cfg *rest.Config, sch *runtime.Scheme) error {
	c, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	applied, err := admit.EnsurePolicies(ctx, c)
	if err != nil {
		return err
	}
	setupLog.Info("Applied the admission policies and their bindings", "objects", applied)
	return nil
}

// certFlag is the flags of one certificate the manager may make itself
// (internal/certs): --<p>-cert-secret, --<p>-ca-configmap, --<p>-service
// and --<p>-cert-dir.
type certFlag struct{ secret, configMap, service, dir *string }

func certFlags(p, whose, when string) certFlag {
	return certFlag{
		secret: flag.String(p+"-cert-secret", "kubeforge-"+p+"-cert",
			when+": the Secret (in the manager's namespace) where the manager keeps "+whose+" CA and serving certificate, which it makes and renews."),
		configMap: flag.String(p+"-ca-configmap", "kubeforge-"+p+"-ca",
			when+": the ConfigMap (in the manager's namespace) where the manager publishes the CA of "+whose+" certificate (ca.crt)."),
		service: flag.String(p+"-service", map[string]string{"api": "kubeforge-api", "webhook": "kubeforge-webhook-service"}[p],
			when+": the Service whose DNS names "+whose+" certificate is for."),
		dir: flag.String(p+"-cert-dir", "/var/run/kubeforge/"+p+"-certs",
			when+": a writable directory where each replica keeps the certificate it serves."),
	}
}

func (f certFlag) options(name string, serviceNames func(string) []string) certs.Options {
	return certs.Options{Name: name, Secret: *f.secret, CAConfigMap: *f.configMap, Dir: *f.dir, DNSNames: serviceNames(*f.service)}
}

// ownNamespace is the namespace the manager runs in ($POD_NAMESPACE, else
// its ServiceAccount's), else fallback; "" outside a cluster without one.
func ownNamespace(fallback string) string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return fallback
}

// keyNamespace is where the ownership key is kept: --ownership-key-namespace,
// else the manager's own namespace.
func keyNamespace(flagged, leaderNamespace string) string {
	if flagged != "" {
		return flagged
	}
	return ownNamespace(leaderNamespace)
}

// loadPremade reads (or, at the first start of a kubeforge that keeps it,
// makes) the record of the objects made before the ownership key that the
// one-time migration may seal. Without it no object is migrated: one made
// before the key reports NameConflict until a start that can make it.
func loadPremade(mgr ctrl.Manager, keys *proof.Keyring, namespace string, scope engine.Scope, ts []engine.Types) *engine.Premade {
	var owned []client.Object
	for _, t := range ts {
		owned = append(owned, t.Owned...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := engine.LoadPremade(ctx, mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme(), keys, namespace, scope, owned)
	if err != nil {
		setupLog.Error(err, "Unable to read or make the record of objects made before the ownership key; none is migrated until a start that can")
		return nil
	}
	setupLog.Info("Loaded the record of objects made before the ownership key", "configmap", namespace+"/"+engine.PremadeRecord, "objects", p.Len())
	return p
}

// loadOwnershipKey reads (or, on the very first start, makes) the key
// that seals what kubeforge creates, from the API server directly.
func loadOwnershipKey(cfg *rest.Config, sch *runtime.Scheme, namespace, leaderNamespace, name string) (*proof.Keyring, error) {
	namespace = keyNamespace(namespace, leaderNamespace)
	if namespace == "" {
		return nil, errors.New("set --ownership-key-namespace (or POD_NAMESPACE, or --leader-election-namespace)")
	}
	c, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	keys, err := proof.Load(ctx, c, namespace, name)
	if err != nil {
		return nil, err
	}
	setupLog.Info("Loaded the ownership key", "secret", namespace+"/"+name, "since", keys.Since)
	return keys, nil
}
