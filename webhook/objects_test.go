package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestCompleteObject(t *testing.T) {
	tests := []struct {
		name string
		obj  map[string]any
		req  func(*admission.Request)
		want map[string]any
	}{
		{
			name: "namespace and type filled from the request",
			obj:  map[string]any{"metadata": map[string]any{"name": "a"}},
			want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "a", "namespace": "web"}},
		},
		{
			name: "metadata created",
			obj:  map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"},
			want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"namespace": "web"}},
		},
		{
			name: "malformed metadata left alone",
			obj:  map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": "x"},
			want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": "x"},
		},
		{
			name: "Namespace objects get no namespace",
			obj:  map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "web"}},
			req: func(r *admission.Request) {
				r.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "Namespace"}
			},
			want: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "web"}},
		},
		{
			name: "core group apiVersion",
			obj:  map[string]any{"metadata": map[string]any{"name": "s", "namespace": "web"}},
			req: func(r *admission.Request) {
				r.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "Secret"}
			},
			want: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "web"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
				Namespace: "web",
			}}
			if tt.req != nil {
				tt.req(&req)
			}
			completeObject(tt.obj, req)
			if diff := cmp.Diff(tt.want, tt.obj); diff != "" {
				t.Errorf("completeObject() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		name    string
		raw     runtime.RawExtension
		want    map[string]any
		wantErr string
	}{
		{name: "object", raw: runtime.RawExtension{Raw: []byte(` {"kind":"Pod"} `)}, want: map[string]any{"kind": "Pod"}},
		{name: "in-memory object", raw: runtime.RawExtension{Object: &metav1.Status{Message: "m"}}, want: map[string]any{"message": "m", "metadata": map[string]any{}}},
		{name: "empty", raw: runtime.RawExtension{}, wantErr: "request carries no object"},
		{name: "null", raw: runtime.RawExtension{Raw: []byte("null")}, wantErr: "request carries no object"},
		{name: "array", raw: runtime.RawExtension{Raw: []byte("[1]")}, wantErr: "decode object: json: cannot unmarshal array into Go value of type map[string]interface {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeObject(tt.raw)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("decodeObject() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeObject() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decodeObject() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOnlyMetadataOrStatus(t *testing.T) {
	base := deployment("web", "api", "nginx:1")
	tests := []struct {
		name string
		new  map[string]any
		want bool
	}{
		{"same", base, true},
		{"labels", with(base, map[string]any{"a": "b"}, "metadata", "labels"), true},
		{"status", with(base, map[string]any{"replicas": int64(1)}, "status"), true},
		{"spec", with(base, int64(5), "spec", "replicas"), false},
		{"new top-level field", with(base, "Always", "operation"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onlyMetadataOrStatus(deepCopy(base), deepCopy(tt.new)); got != tt.want {
				t.Errorf("onlyMetadataOrStatus() = %v, want %v", got, tt.want)
			}
		})
	}
}
