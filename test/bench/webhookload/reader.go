package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/webhook"
)

// memReader stands in for the manager's informer cache: typed Applications
// and AppProjects in memory, deep-copied on every read as the cache does,
// with Applications indexed by webhook.ProjectIndexField.
type memReader struct {
	apps     map[types.NamespacedName]*v1alpha1.Application
	projects map[types.NamespacedName]*v1alpha1.AppProject
}

var _ client.Reader = (*memReader)(nil)

// newMemReader holds objs (JSON-like maps of Applications and AppProjects).
func newMemReader(objs ...map[string]any) *memReader {
	m := &memReader{
		apps:     map[types.NamespacedName]*v1alpha1.Application{},
		projects: map[types.NamespacedName]*v1alpha1.AppProject{},
	}
	for _, o := range objs {
		switch kind, _ := o["kind"].(string); kind {
		case v1alpha1.ApplicationKind:
			app := fromMap[v1alpha1.Application](o)
			m.apps[client.ObjectKeyFromObject(app)] = app
		case v1alpha1.AppProjectKind:
			proj := fromMap[v1alpha1.AppProject](o)
			m.projects[client.ObjectKeyFromObject(proj)] = proj
		default:
			panic(fmt.Sprintf("memReader: unsupported kind %q", kind)) // static data
		}
	}
	return m
}

// Get implements client.Reader.
func (m *memReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *v1alpha1.Application:
		app, ok := m.apps[key]
		if !ok {
			return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource(v1alpha1.ApplicationResource).GroupResource(), key.Name)
		}
		app.DeepCopyInto(o)
	case *v1alpha1.AppProject:
		proj, ok := m.projects[key]
		if !ok {
			return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource(v1alpha1.AppProjectResource).GroupResource(), key.Name)
		}
		proj.DeepCopyInto(o)
	default:
		return errUnsupported
	}
	return nil
}

// List implements client.Reader for Applications, by namespace and the
// project field index.
func (m *memReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*v1alpha1.ApplicationList)
	if !ok {
		return errUnsupported
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	l.Items = nil
	for key, app := range m.apps {
		if lo.Namespace != "" && key.Namespace != lo.Namespace {
			continue
		}
		if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
			values := webhook.ProjectIndexValue(app)
			if len(values) == 0 || !lo.FieldSelector.Matches(fields.Set{webhook.ProjectIndexField: values[0]}) {
				continue
			}
		}
		l.Items = append(l.Items, *app.DeepCopy())
	}
	return nil
}

// fromMap converts a JSON-like map to a typed object.
func fromMap[T any](obj map[string]any) *T {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out); err != nil {
		panic(fmt.Sprintf("decode object: %v", err)) // static data
	}
	return out
}

// rawExtension wraps encoded JSON.
func rawExtension(raw []byte) runtime.RawExtension { return runtime.RawExtension{Raw: raw} }
