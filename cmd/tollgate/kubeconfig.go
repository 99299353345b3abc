package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// kubeconfig is a loaded client configuration.
type kubeconfig struct {
	rest *rest.Config
	// user is the kubeconfig user (AuthInfo) name of the current context;
	// empty in a pod.
	user string
}

// loadKubeconfig loads path, or with an empty path $KUBECONFIG,
// ~/.kube/config, and finally the in-cluster service account.
func loadKubeconfig(path string) (kubeconfig, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		if path == "" {
			return kubeconfig{}, fmt.Errorf("load kubeconfig: %w", err)
		}
		return kubeconfig{}, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	k := kubeconfig{rest: cfg}
	if raw, err := cc.RawConfig(); err == nil {
		if c, ok := raw.Contexts[raw.CurrentContext]; ok && c != nil {
			k.user = c.AuthInfo
		}
	}
	return k, nil
}

// newScheme returns a scheme with the built-in types and Argo CD's.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}
