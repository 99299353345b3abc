// Package argocd reads the Argo CD installation the controllers share: the
// Secrets and ConfigMaps of the control-plane namespace (listed, read or
// watched), and which AppProject changes matter to them.
package argocd

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// Names of Argo CD's objects in the control-plane namespace.
const (
	// SecretTypeLabel marks Argo CD's Secrets: repository, repo-creds and
	// cluster.
	SecretTypeLabel = "argocd.argoproj.io/secret-type"
	// KnownHostsConfigMap holds the SSH known hosts, under KnownHostsKey.
	KnownHostsConfigMap = "argocd-ssh-known-hosts-cm"
	KnownHostsKey       = "ssh_known_hosts"
)

// ListSecrets lists the Argo CD Secrets (repository, repo-creds, cluster)
// of namespace.
func ListSecrets(ctx context.Context, c client.Reader, namespace string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.HasLabels{SecretTypeLabel}); err != nil {
		return nil, fmt.Errorf("list argo cd secrets: %w", err)
	}
	return list.Items, nil
}

// ReadKnownHosts reads the SSH known hosts of namespace; a missing
// ConfigMap is no known hosts.
func ReadKnownHosts(ctx context.Context, reader client.Reader, namespace string) ([]byte, error) {
	var cm corev1.ConfigMap
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: KnownHostsConfigMap}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return []byte{}, nil
	case err != nil:
		return nil, fmt.Errorf("read configmap %s: %w", KnownHostsConfigMap, err)
	}
	return []byte(cm.Data[KnownHostsKey]), nil
}

// IsSSH reports whether a repository URL uses SSH (and so needs the known
// hosts).
func IsSSH(u string) bool {
	return strings.HasPrefix(reposerver.NormalizeURL(u), "ssh://")
}

// Credentials matches repositories to the credentials of Secrets (the
// Argo CD Secrets of Namespace) as MatchCredentials does, reading
// the SSH known hosts of Namespace with Reader once, when the first ssh
// repository needs them.
type Credentials struct {
	Reader    client.Reader
	Namespace string
	Secrets   []corev1.Secret

	knownHosts []byte
}

// For returns the credentials of repoURL for a source of project.
func (c *Credentials) For(ctx context.Context, repoURL, project string) (reposerver.Credentials, error) {
	if c.knownHosts == nil && IsSSH(repoURL) {
		kh, err := ReadKnownHosts(ctx, c.Reader, c.Namespace)
		if err != nil {
			return reposerver.Credentials{}, err
		}
		c.knownHosts = kh
	}
	return MatchCredentials(repoURL, project, c.Secrets, c.knownHosts), nil
}

// GitRepositories returns the Git repositories and repo-creds templates of
// Secrets that an Application of project may use and whose URLs
// sourceRepos permit (reposerver.PermittedGitRepositories): what a render
// request carries for the repositories a render reaches by itself. An ssh
// one carries the SSH known hosts, read as For reads them.
func (c *Credentials) GitRepositories(ctx context.Context, project string, sourceRepos []string) ([]reposerver.GitRepository, error) {
	repos, err := reposerver.PermittedGitRepositories(ctx, GitRepositories(c.Secrets, project), sourceRepos)
	if err != nil {
		return nil, err
	}
	for i := range repos {
		if !IsSSH(repos[i].URL) {
			continue
		}
		if c.knownHosts == nil {
			kh, err := ReadKnownHosts(ctx, c.Reader, c.Namespace)
			if err != nil {
				return nil, err
			}
			c.knownHosts = kh
		}
		if len(c.knownHosts) > 0 {
			repos[i].Credentials.SSHKnownHosts = c.knownHosts
		}
	}
	return repos, nil
}

// ProjectChanged passes AppProject creations, deletions and spec changes.
func ProjectChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*v1alpha1.AppProject)
			n, ok2 := e.ObjectNew.(*v1alpha1.AppProject)
			return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Spec, n.Spec)
		},
	}
}

// WatchNamed calls update with the object name of resource (a core
// resource such as configmaps or secrets, of obj's type) in namespace when
// it starts and on every change until ctx ends (nil when there is none or
// it is deleted). It returns once the first read is done.
func WatchNamed(ctx context.Context, cfg *rest.Config, resource, namespace, name string, obj runtime.Object, update func(runtime.Object)) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("watch %s %s: %w", resource, name, err)
	}
	lw := toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), resource, namespace,
		fields.OneTermEqualSelector(metav1.ObjectNameField, name))
	inf := toolscache.NewSharedIndexInformer(lw, obj, 0, toolscache.Indexers{})
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { update(o.(runtime.Object)) },
		UpdateFunc: func(_, o any) { update(o.(runtime.Object)) },
		DeleteFunc: func(any) { update(nil) },
	}); err != nil {
		return fmt.Errorf("watch %s %s: %w", resource, name, err)
	}
	go inf.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watch %s %s: %w", resource, name, ctx.Err())
	}
	return nil
}

// Project reads the AppProject name of the control-plane namespace, nil
// when it does not exist. readers are asked in turn while they answer
// NotFound: a cache first, then the API server, so that an AppProject
// applied together with its Application and not yet in the cache is not
// called missing. Extra options (client.UnsafeDisableDeepCopy) go to every
// read.
func Project(ctx context.Context, namespace, name string, readers []client.Reader, opts ...client.GetOption) (*v1alpha1.AppProject, error) {
	var p v1alpha1.AppProject
	key := client.ObjectKey{Namespace: namespace, Name: name}
	var err error = apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("appprojects").GroupResource(), name)
	for _, r := range readers {
		if err = r.Get(ctx, key, &p, opts...); !apierrors.IsNotFound(err) {
			break
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get appproject %s: %w", name, err)
	}
	return &p, nil
}
