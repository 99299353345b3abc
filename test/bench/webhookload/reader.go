package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/webhook"
)

// memReader stands in for the manager's informer cache: unstructured
// objects in memory, deep-copied on every read as the cache does, with
// Applications indexed by webhook.ProjectIndexField.
type memReader struct {
	objs map[schema.GroupVersionKind]map[types.NamespacedName]map[string]any
}

var _ client.Reader = (*memReader)(nil)

// newMemReader holds objs (JSON-like maps with apiVersion, kind and
// metadata).
func newMemReader(objs ...map[string]any) *memReader {
	m := &memReader{objs: map[schema.GroupVersionKind]map[types.NamespacedName]map[string]any{}}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: jsonCopy(o)}
		gvk := u.GroupVersionKind()
		if m.objs[gvk] == nil {
			m.objs[gvk] = map[types.NamespacedName]map[string]any{}
		}
		m.objs[gvk][types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = u.Object
	}
	return m
}

// Get implements client.Reader.
func (m *memReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return errUnsupported
	}
	gvk := u.GroupVersionKind()
	o, ok := m.objs[gvk][key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}, key.Name)
	}
	u.Object = runtime.DeepCopyJSON(o)
	return nil
}

// List implements client.Reader for namespaces and the project field
// index.
func (m *memReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ul, ok := list.(*unstructured.UnstructuredList)
	if !ok {
		return errUnsupported
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	gvk := ul.GroupVersionKind()
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	ul.Items = nil
	for key, o := range m.objs[gvk] {
		if lo.Namespace != "" && key.Namespace != lo.Namespace {
			continue
		}
		u := unstructured.Unstructured{Object: o}
		if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
			values := webhook.ProjectIndexValue(&u)
			if len(values) == 0 || !lo.FieldSelector.Matches(fields.Set{webhook.ProjectIndexField: values[0]}) {
				continue
			}
		}
		ul.Items = append(ul.Items, unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)})
	}
	return nil
}

// jsonCopy round-trips obj through JSON so that it holds only the types
// runtime.DeepCopyJSON accepts.
func jsonCopy(obj map[string]any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("encode object: %v", err)) // static data
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("decode object: %v", err))
	}
	return out
}

// rawExtension wraps encoded JSON.
func rawExtension(raw []byte) runtime.RawExtension { return runtime.RawExtension{Raw: raw} }
