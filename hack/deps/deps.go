//go:build tools

// Package deps pins the packages tollgate builds on while the code that uses
// them is written, so go.sum stays complete. Removed once everything imports.
package deps

import (
	_ "github.com/bitnami-labs/sealed-secrets/pkg/apis/sealedsecrets/v1alpha1"
	_ "github.com/bitnami-labs/sealed-secrets/pkg/crypto"
	_ "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	_ "github.com/fluxcd/pkg/gittestserver"
	_ "github.com/fluxcd/pkg/ssa"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/go-git/go-git/v5"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/itchyny/gojq"
	_ "github.com/open-policy-agent/opa/v1/ast"
	_ "github.com/open-policy-agent/opa/v1/rego"
	_ "github.com/open-policy-agent/opa/v1/tester"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/zap"
	_ "helm.sh/helm/v3/pkg/chart/loader"
	_ "helm.sh/helm/v3/pkg/chartutil"
	_ "helm.sh/helm/v3/pkg/engine"
	_ "helm.sh/helm/v3/pkg/releaseutil"
	_ "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/controller-runtime"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/kustomize/api/krusty"
	_ "sigs.k8s.io/kustomize/kyaml/filesys"
	_ "sigs.k8s.io/yaml"
)
