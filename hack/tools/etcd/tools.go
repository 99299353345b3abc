//go:build tools

// Package tools pins the etcd server main package so that `make tools` can
// build it from the Go module proxy alone.
package tools

import _ "go.etcd.io/etcd/server/v3"
