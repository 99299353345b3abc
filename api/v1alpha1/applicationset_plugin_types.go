package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PluginGenerator asks an HTTP service (Argo CD's generator plugin
// protocol) for the parameter sets: the ConfigMap ConfigMapRef names, in
// the control-plane namespace, holds its baseUrl and token.
type PluginGenerator struct {
	ConfigMapRef PluginConfigMapRef `json:"configMapRef"`
	// +optional
	Input PluginInput `json:"input,omitzero"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// PluginConfigMapRef names the ConfigMap of a generator plugin.
type PluginConfigMapRef struct {
	Name string `json:"name"`
}

// PluginInput is what the plugin is sent.
type PluginInput struct {
	// +optional
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// DuckTypeGenerator (clusterDecisionResource) produces one parameter set
// per cluster a resource's status lists (Open Cluster Management's
// PlacementDecision, for one): the ConfigMap ConfigMapRef names, in the
// control-plane namespace, says the resource's apiVersion and kind (its
// plural resource name), the status list (statusListKey, "clusters" by
// default) and the key naming each cluster (matchKey).
type DuckTypeGenerator struct {
	ConfigMapRef string `json:"configMapRef"`
	// Name is the resource read; or LabelSelector selects them.
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitzero"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
	// Values are added as values.<key>, as written (not rendered).
	// +optional
	Values map[string]string `json:"values,omitempty"`
}
