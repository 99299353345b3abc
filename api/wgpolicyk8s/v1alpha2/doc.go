// Package v1alpha2 holds tollgate's Go types for the Kubernetes Policy
// Working Group's wgpolicyk8s.io/v1alpha2 PolicyReport and
// ClusterPolicyReport, field-compatible with the CRDs Kyverno and Policy
// Reporter install and read: the audit writes one PolicyReport per namespace
// and one ClusterPolicyReport for cluster-scoped objects.
//
// Deepcopy functions and the optional CRDs in config/policyreport are
// generated from these types by hack/generate.sh. A cluster that already has
// the CRDs (from Kyverno or Policy Reporter) keeps its own.
//
// +kubebuilder:object:generate=true
// +groupName=wgpolicyk8s.io
package v1alpha2
