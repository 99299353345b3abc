package testutil

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// NewScheme returns a scheme of the built-in types and v1alpha1's, for
// clients and caches a test builds outside a test function (TestMain).
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// Scheme returns a scheme of the built-in types and v1alpha1's, for fake
// clients.
func Scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
