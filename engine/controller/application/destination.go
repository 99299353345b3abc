package application

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/authority"
)

// Argo CD cluster Secret conventions.
const (
	// InClusterServer is the API server URL of the cluster the controller
	// runs in.
	InClusterServer = "https://kubernetes.default.svc"
	// InClusterName is the name of the cluster the controller runs in.
	InClusterName = "in-cluster"
	// SecretTypeLabel labels Argo CD's repository and cluster Secrets.
	SecretTypeLabel = argocd.SecretTypeLabel
	// SecretTypeCluster is the SecretTypeLabel value of a cluster Secret:
	// keys name, server and config (JSON).
	SecretTypeCluster = "cluster"
)

// errInvalidDestination marks a destination that names no known cluster or
// names one in two ways; the engine reports it as InvalidSpecError.
var errInvalidDestination = errors.New("invalid destination")

// cluster is one destination cluster: a metadata cache for cheap idle
// checks, and the authority, the only door that writes to it.
type cluster struct {
	// server is the API server URL the Applications name; name is the
	// name of its cluster Secret (InClusterName for the controller's
	// own). name is written and read under clusters.mu.
	server string
	name   string
	// version is the resourceVersion of the cluster Secret it was built
	// from; empty for the in-cluster destination.
	version   string
	config    *rest.Config
	mapper    meta.RESTMapper
	discovery discovery.CachedDiscoveryInterface
	// meta holds metadata-only informers, started lazily per kind on first
	// use; its resourceVersions tell an idle resync that nothing changed.
	meta cache.Cache
	// uncached holds the kinds (schema.GroupVersionKind) whose metadata
	// informer did not sync; comparisons involving them are always full.
	uncached sync.Map
	// watched holds the kinds (schema.GroupKind) whose informer reports
	// live changes to the reconciler (watchLive).
	watched sync.Map
	// indexed holds the kinds (schema.GroupVersionKind) whose informer has the
	// tracking index (*kindIndex, see listOwned).
	indexed sync.Map
	auth    *authority.Authority
	// scope is what its cluster Secret lets the engine manage, fixed
	// when it is built: a change of the Secret builds it again.
	scope apply.Scope
	stop  context.CancelFunc
	// kubeVersion caches the cluster's server version (capabilities).
	kubeVersion clusterVersion
	// stats count the kinds, objects and events of meta, for the metrics;
	// nil counts nothing.
	stats *cacheStats
}

// clusterConfig is the "config" key of an Argo CD cluster Secret. Only the
// fields tollgate can use are decoded; others are rejected by resolve when
// they carry the only credentials.
type clusterConfig struct {
	Username        string          `json:"username,omitempty"`
	Password        string          `json:"password,omitempty"`
	BearerToken     string          `json:"bearerToken,omitempty"`
	TLSClientConfig tlsClientConfig `json:"tlsClientConfig"`
	AWSAuthConfig   json.RawMessage `json:"awsAuthConfig,omitempty"`
	ExecProvider    json.RawMessage `json:"execProviderConfig,omitempty"`
}

type tlsClientConfig struct {
	Insecure   bool   `json:"insecure,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	// CAData, CertData and KeyData are PEM, base64-encoded in the JSON as
	// Argo CD writes them.
	CAData   []byte `json:"caData,omitempty"`
	CertData []byte `json:"certData,omitempty"`
	KeyData  []byte `json:"keyData,omitempty"`
}

// clusterFactory builds the client side of the cluster server from a REST
// config, for the part of it scope holds.
type clusterFactory func(ctx context.Context, server string, cfg *rest.Config, scope apply.Scope) (*cluster, error)

// clusters resolves Application destinations to clusters and caches the
// clients built for them, rebuilding one when its Secret changes.
type clusters struct {
	factory clusterFactory
	local   *rest.Config

	mu     sync.Mutex
	byName map[string]*cluster // keyed by server URL
	// ctx is the lifetime of the remote clusters' caches.
	ctx    context.Context
	cancel context.CancelFunc
}

func newClusters(local *rest.Config, factory clusterFactory) *clusters {
	return &clusters{factory: factory, local: local, byName: map[string]*cluster{}}
}

// resolve returns the cluster of dest. secrets are the cluster Secrets of
// the control-plane namespace. A destination that names no cluster, or
// names one by both server and name, is an error wrapping
// errInvalidDestination.
func (cs *clusters) resolve(ctx context.Context, dest v1alpha1.ApplicationDestination, secrets []corev1.Secret) (*cluster, error) {
	server := strings.TrimRight(dest.Server, "/")
	switch {
	case server == "" && dest.Name == "":
		return nil, fmt.Errorf("%w: set destination.server or destination.name", errInvalidDestination)
	case server != "" && dest.Name != "":
		return nil, fmt.Errorf("%w: destination.server and destination.name are both set; set one", errInvalidDestination)
	}
	secret := findClusterSecret(dest, secrets)
	if secret == nil {
		if server == InClusterServer || dest.Name == InClusterName {
			// A Secret of the in-cluster server under another name still
			// says what of it the engine manages.
			own := findClusterSecret(v1alpha1.ApplicationDestination{Server: InClusterServer}, secrets)
			return cs.get(ctx, InClusterServer, InClusterName, own, func() (*rest.Config, error) { return rest.CopyConfig(cs.local), nil })
		}
		if dest.Name != "" {
			return nil, fmt.Errorf("%w: no cluster named %q (no Secret labelled %s=%s has that name)", errInvalidDestination, dest.Name, SecretTypeLabel, SecretTypeCluster)
		}
		return nil, fmt.Errorf("%w: cluster %s is not registered (no Secret labelled %s=%s has that server)", errInvalidDestination, server, SecretTypeLabel, SecretTypeCluster)
	}
	url, name := strings.TrimRight(string(secret.Data["server"]), "/"), string(secret.Data["name"])
	if url == InClusterServer {
		return cs.get(ctx, InClusterServer, cmp.Or(name, InClusterName), secret, func() (*rest.Config, error) { return rest.CopyConfig(cs.local), nil })
	}
	return cs.get(ctx, url, name, secret, func() (*rest.Config, error) { return restConfigFromSecret(secret) })
}

// secretScope reads what a cluster Secret lets the engine manage, as Argo
// CD's SecretToCluster does: key namespaces, a comma-separated list (blank
// entries dropped), and key clusterResources, exactly "true". A nil Secret
// (the in-cluster destination without one) is the whole cluster.
func secretScope(s *corev1.Secret) apply.Scope {
	if s == nil {
		return apply.Scope{}
	}
	var scope apply.Scope
	for ns := range strings.SplitSeq(string(s.Data["namespaces"]), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			scope.Namespaces = append(scope.Namespaces, ns)
		}
	}
	scope.ClusterResources = string(s.Data["clusterResources"]) == "true"
	return scope
}

// findClusterSecret returns the cluster Secret of secrets that dest names,
// by name or by server; nil when none does.
func findClusterSecret(dest v1alpha1.ApplicationDestination, secrets []corev1.Secret) *corev1.Secret {
	server := strings.TrimRight(dest.Server, "/")
	for i := range secrets {
		s := &secrets[i]
		if s.Labels[SecretTypeLabel] != SecretTypeCluster {
			continue
		}
		if (dest.Name != "" && string(s.Data["name"]) == dest.Name) ||
			(server != "" && strings.TrimRight(string(s.Data["server"]), "/") == server) {
			return s
		}
	}
	return nil
}

// destinationServer returns the API server URL of the cluster dest names,
// as resolve finds it but without connecting: "" when dest names no
// cluster by name.
func destinationServer(dest v1alpha1.ApplicationDestination, secrets []corev1.Secret) string {
	if dest.Server != "" {
		return strings.TrimRight(dest.Server, "/")
	}
	if s := findClusterSecret(dest, secrets); s != nil {
		return strings.TrimRight(string(s.Data["server"]), "/")
	}
	if dest.Name == InClusterName {
		return InClusterServer
	}
	return ""
}

// get returns the cached cluster for server as its cluster Secret says
// (nil: the in-cluster destination without one), building it with build
// when missing or when the Secret changed; name is the name it goes by.
func (cs *clusters) get(ctx context.Context, server, name string, secret *corev1.Secret, build func() (*rest.Config, error)) (*cluster, error) {
	version := ""
	if secret != nil {
		version = secret.ResourceVersion
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.byName[server]; ok && c.version == version {
		c.name = name
		return c, nil
	}
	cfg, err := build()
	if err != nil {
		return nil, err
	}
	if cs.ctx == nil {
		// The caches outlive the reconcile that built them; stop ends them.
		cs.ctx, cs.cancel = context.WithCancel(context.WithoutCancel(ctx))
	}
	scope := secretScope(secret)
	c, err := cs.factory(cs.ctx, server, cfg, scope)
	if err != nil {
		return nil, fmt.Errorf("connect to cluster %s: %w", server, err)
	}
	c.server, c.name, c.version, c.scope = server, name, version, scope
	if old, ok := cs.byName[server]; ok && old.stop != nil {
		old.stop()
	}
	cs.byName[server] = c
	return c, nil
}

// stop stops every cluster's cache.
func (cs *clusters) stop() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range cs.byName {
		if c.stop != nil {
			c.stop()
		}
	}
	if cs.cancel != nil {
		cs.cancel()
	}
	cs.byName = map[string]*cluster{}
	cs.ctx, cs.cancel = nil, nil
}

// restConfigFromSecret builds a REST config from an Argo CD cluster Secret.
func restConfigFromSecret(s *corev1.Secret) (*rest.Config, error) {
	server := string(s.Data["server"])
	var cc clusterConfig
	if raw := s.Data["config"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &cc); err != nil {
			return nil, fmt.Errorf("%w: cluster Secret %s: key config: %w", errInvalidDestination, s.Name, err)
		}
	}
	if cc.BearerToken == "" && cc.Username == "" && len(cc.TLSClientConfig.CertData) == 0 &&
		(len(cc.AWSAuthConfig) > 0 || len(cc.ExecProvider) > 0) {
		return nil, fmt.Errorf("%w: cluster Secret %s: awsAuthConfig and execProviderConfig are not supported; use a bearerToken or a client certificate", errInvalidDestination, s.Name)
	}
	return &rest.Config{
		Host:        server,
		Username:    cc.Username,
		Password:    cc.Password,
		BearerToken: cc.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   cc.TLSClientConfig.Insecure,
			ServerName: cc.TLSClientConfig.ServerName,
			CAData:     cc.TLSClientConfig.CAData,
			CertData:   cc.TLSClientConfig.CertData,
			KeyData:    cc.TLSClientConfig.KeyData,
		},
		QPS:   50,
		Burst: 100,
	}, nil
}

// newClusterClients builds the clients of a cluster: a dynamic REST mapper
// (it re-reads discovery when a kind is unknown, e.g. after a CRD was
// applied), the authority (which alone writes), and a metadata cache whose
// informers live until ctx ends or the cluster is replaced, each made by
// newInformer (nil: client-go's).
func newClusterClients(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, newInformer informerFactory, opts authority.Options) (*cluster, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("create HTTP client: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create REST mapper: %w", err)
	}
	co := cache.Options{
		HTTPClient:       httpClient,
		Scheme:           scheme,
		Mapper:           mapper,
		DefaultTransform: keepResourceVersion,
		NewInformer:      newInformer,
	}
	if ns := opts.Apply.Scope.Namespaces; len(ns) > 0 {
		// Argo CD's namespaced mode: namespaced kinds are watched in
		// those namespaces only, as its cluster cache does.
		co.DefaultNamespaces = map[string]cache.Config{}
		for _, n := range ns {
			co.DefaultNamespaces[n] = cache.Config{}
		}
	}
	mc, err := cache.New(cfg, co)
	if err != nil {
		return nil, fmt.Errorf("create metadata cache: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	cd := memory.NewMemCacheClient(dc)
	auth, err := authority.New(authority.Connection{Config: cfg, HTTPClient: httpClient, Scheme: scheme, Mapper: mapper, Discovery: cd}, opts)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { _ = mc.Start(cctx) }()
	return &cluster{config: cfg, mapper: mapper, discovery: cd, meta: mc, auth: auth, stop: cancel, scope: opts.Apply.Scope}, nil
}

// keepResourceVersion trims an object of the metadata cache to what the
// engine reads: its name, namespace and resourceVersion (fingerprint), and
// its generation, tracking annotation and instance label (watchLive tells
// drift by them, listOwned ownership; an instance label comes with the
// first owner reference, which makes the label no claim).
// The cache holds every object of each kind in the cluster, whose labels,
// other annotations and owner references would otherwise be most of its
// memory. Anything other than metadata (a deletion tombstone) is left as
// it is.
func keepResourceVersion(in any) (any, error) {
	md, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	var annotations map[string]string
	if id, ok := md.Annotations[v1alpha1.AnnotationKeyTrackingID]; ok {
		annotations = map[string]string{v1alpha1.AnnotationKeyTrackingID: id}
	}
	var labels map[string]string
	var owners []metav1.OwnerReference
	if v, ok := md.Labels[v1alpha1.LabelKeyAppInstance]; ok {
		labels = map[string]string{v1alpha1.LabelKeyAppInstance: v}
		if len(md.OwnerReferences) > 0 {
			// An owned object's label does not track it (v1alpha1.OwnerOf):
			// one reference says so.
			r := md.OwnerReferences[0]
			owners = []metav1.OwnerReference{{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID}}
		}
	}
	md.ObjectMeta = metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace, ResourceVersion: md.ResourceVersion,
		Generation: md.Generation, Annotations: annotations, Labels: labels, OwnerReferences: owners}
	return md, nil
}
