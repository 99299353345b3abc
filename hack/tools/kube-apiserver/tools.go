//go:build tools

// Package tools pins the kube-apiserver main package so that `make tools` can
// build it from the Go module proxy alone.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
