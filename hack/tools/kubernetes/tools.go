//go:build tools

// Package tools pins the control-plane main packages (kube-apiserver and
// kube-controller-manager) so that `make tools` can build them from the Go
// module proxy alone.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
