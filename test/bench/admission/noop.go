package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The no-op webhook is the peer: the same server (controller-runtime's,
// TLS, HTTP/2) under the same configuration, answering every review
// allowed after reading only its uid and name. What it adds is what
// calling any webhook costs the API server and the machine; what tollgate
// adds beyond it is tollgate's own work.

const (
	// webhookName is the shipped configuration's name.
	webhookName = "tollgate"
	// noopPath is where the no-op webhook is served.
	noopPath = "/noop"
	// noopProbe names the object the no-op webhook denies, so that a
	// probe can tell it is the one called.
	noopProbe = "probe-noop"
)

// serveNoop serves the no-op webhook on a port of its own.
func serveNoop(ctx context.Context, opts crenvtest.WebhookInstallOptions) (*replicas, error) {
	r := &replicas{opts: opts, path: noopPath, handler: http.HandlerFunc(noop)}
	if err := r.add(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// noop answers a review allowed, but for noopProbe.
func noop(w http.ResponseWriter, r *http.Request) {
	var review struct {
		Request struct {
			UID  string `json:"uid"`
			Name string `json:"name"`
		} `json:"request"`
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &review)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"response":   map[string]any{"uid": review.Request.UID, "allowed": review.Request.Name != noopProbe},
	})
}
