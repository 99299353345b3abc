// Package health assesses the health of live Kubernetes objects the way
// Argo CD does, for the engine's wait-for-healthy step, the Application
// status, and `tollgate health`.
//
// Lua health checks come first, found as Argo CD finds them (Checker): the
// argocd-cm customizations, customizations directories in Argo CD's
// resource_customizations layout, then tollgate's own library of checks
// for common custom resources (Builtin: Argo Rollouts, cert-manager,
// external-secrets, sealed-secrets, Flux, KEDA, Crossplane, PDB...), run
// sandboxed under a time limit.
//
// Built-in kinds follow Argo CD's rules (gitops-engine's pkg/health and the
// Lua health checks Argo CD ships for CronJob and Application): Deployment,
// StatefulSet, DaemonSet, ReplicaSet, Pod, Job, CronJob,
// PersistentVolumeClaim, Service, Ingress, HorizontalPodAutoscaler,
// APIService, CustomResourceDefinition and Argo CD's own Application. Any
// other kind is judged by kstatus (fluxcd/cli-utils), which understands the
// conventional Ready/Reconciling/Stalled conditions and observedGeneration;
// an object with no status at all (ConfigMap, Secret, RBAC) is Healthy.
// An object being deleted is Progressing.
//
// The package is a leaf: it reads unstructured objects, and files only of
// the customizations directories it is given.
package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Status is the health of an object, with Argo CD's values.
type Status string

// Health statuses, from best to worst (see Worst).
const (
	// Healthy: the object is fully available.
	Healthy Status = "Healthy"
	// Suspended: the object is paused or suspended on purpose (a paused
	// Deployment, a suspended CronJob or Job).
	Suspended Status = "Suspended"
	// Progressing: not healthy yet, but it may still become healthy.
	Progressing Status = "Progressing"
	// Missing: the object does not exist in the cluster.
	Missing Status = "Missing"
	// Degraded: the object failed or cannot become healthy.
	Degraded Status = "Degraded"
	// Unknown: health could not be assessed.
	Unknown Status = "Unknown"
)

// order ranks statuses from best to worst, as Argo CD's IsWorse does.
var order = map[Status]int{Healthy: 0, Suspended: 1, Progressing: 2, Missing: 3, Degraded: 4, Unknown: 5}

// Result is the health of one object.
type Result struct {
	Status  Status `json:"status"`
	Message string `json:"message,omitempty"`
}

// hookFinalizer keeps Argo CD hook objects alive after deletion; such an
// object is judged on its status, not as pending deletion.
const hookFinalizer = "argocd.argoproj.io/hook-finalizer"

// checkFor returns the built-in check of a kind, nil for none.
func checkFor(gvk schema.GroupVersionKind) func(*unstructured.Unstructured) (Result, error) {
	switch gvk.Group {
	case "apps", "extensions":
		switch gvk.Kind {
		case "Deployment":
			return deploymentHealth
		case "StatefulSet":
			return statefulSetHealth
		case "DaemonSet":
			return daemonSetHealth
		case "ReplicaSet":
			return replicaSetHealth
		case "Ingress":
			return ingressHealth
		}
	case "":
		switch gvk.Kind {
		case "Pod":
			return podHealth
		case "Service":
			return serviceHealth
		case "PersistentVolumeClaim":
			return pvcHealth
		}
	case "batch":
		switch gvk.Kind {
		case "Job":
			return jobHealth
		case "CronJob":
			return cronJobHealth
		}
	case "autoscaling":
		if gvk.Kind == "HorizontalPodAutoscaler" {
			return hpaHealth
		}
	case "networking.k8s.io":
		if gvk.Kind == "Ingress" {
			return ingressHealth
		}
	case "apiregistration.k8s.io":
		if gvk.Kind == "APIService" {
			return apiServiceHealth
		}
	case "apiextensions.k8s.io":
		if gvk.Kind == "CustomResourceDefinition" {
			return crdHealth
		}
	case "argoproj.io":
		switch gvk.Kind {
		case "Application":
			return applicationHealth
		case "Workflow":
			return workflowHealth
		}
	}
	return nil
}

// Worst returns the worst of statuses in Argo CD's order: Healthy <
// Suspended < Progressing < Missing < Degraded < Unknown. A value outside
// that set counts as Unknown. With no statuses it returns Healthy.
func Worst(statuses ...Status) Status {
	worst := Healthy
	for _, s := range statuses {
		if IsWorse(worst, s) {
			worst = s
		}
	}
	if _, ok := order[worst]; !ok {
		return Unknown
	}
	return worst
}

// IsWorse reports whether candidate is a worse status than current.
func IsWorse(current, candidate Status) bool {
	return rank(candidate) > rank(current)
}

func rank(s Status) int {
	if r, ok := order[s]; ok {
		return r
	}
	return order[Unknown]
}

// fromUnstructured converts obj into a typed struct. On failure it decodes
// through JSON once more, whose error names the offending field.
func fromUnstructured(obj *unstructured.Unstructured, into any) error {
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into)
	if err == nil {
		return nil
	}
	if b, merr := json.Marshal(obj.Object); merr == nil {
		if jerr := json.Unmarshal(b, into); jerr != nil {
			err = jerr
		}
	}
	return fmt.Errorf("read %s: %w", obj.GetKind(), err)
}

func hasFinalizer(obj *unstructured.Unstructured, name string) bool {
	for _, f := range obj.GetFinalizers() {
		if f == name {
			return true
		}
	}
	return false
}

// describe names obj as kind/namespace/name.
func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + "/" + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + "/" + obj.GetName()
}
