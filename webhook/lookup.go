package webhook

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Argo CD's API group and the kinds the webhook reads from the cache.
var (
	// ApplicationGVK is argoproj.io/v1alpha1 Application.
	ApplicationGVK = schema.GroupVersionKind{Group: argoGroup, Version: "v1alpha1", Kind: "Application"}
	// AppProjectGVK is argoproj.io/v1alpha1 AppProject.
	AppProjectGVK = schema.GroupVersionKind{Group: argoGroup, Version: "v1alpha1", Kind: "AppProject"}
)

const argoGroup = "argoproj.io"

// ProjectIndexField is the cache field index on Applications by the name of
// their AppProject ("default" when spec.project is empty). IndexApplications
// registers it; the Handler lists through it.
const ProjectIndexField = "spec.project"

// IndexApplications registers ProjectIndexField on unstructured
// Applications with indexer (a manager's GetFieldIndexer(), or a cache).
// Call it before the cache starts.
func IndexApplications(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, NewApplication(), ProjectIndexField, ProjectIndexValue); err != nil {
		return fmt.Errorf("index Applications by %s: %w", ProjectIndexField, err)
	}
	return nil
}

// ProjectIndexValue is the indexer function of ProjectIndexField.
func ProjectIndexValue(obj client.Object) []string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	return []string{projectName(u.Object)}
}

// NewApplication returns an empty unstructured Application, e.g. for a
// cache informer.
func NewApplication() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ApplicationGVK)
	return u
}

// NewAppProject returns an empty unstructured AppProject.
func NewAppProject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(AppProjectGVK)
	return u
}

// projectName is an Application's spec.project, "default" when empty.
func projectName(app map[string]any) string {
	name, _, _ := unstructured.NestedString(app, "spec", "project")
	if name == "" {
		return "default"
	}
	return name
}

// getProject reads the AppProject name from the Argo CD namespace in the
// cache, or from the API server when the cache lacks it and an APIReader
// is set; nil without error when it does not exist.
func (h *Handler) getProject(ctx context.Context, name string) (map[string]any, error) {
	u := NewAppProject()
	key := types.NamespacedName{Namespace: h.argocdNS, Name: name}
	from, err := "cache", h.reader.Get(ctx, key, u)
	if apierrors.IsNotFound(err) && h.apiReader != nil {
		from, err = "the API server", h.apiReader.Get(ctx, key, u)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get AppProject %s/%s from %s: %w", h.argocdNS, name, from, err)
	}
	return u.Object, nil
}

// getApplication reads an Application from the cache; nil without error
// when it does not exist.
func (h *Handler) getApplication(ctx context.Context, key types.NamespacedName) (map[string]any, error) {
	u := NewApplication()
	if err := h.reader.Get(ctx, key, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get Application %s from cache: %w", key, err)
	}
	return u.Object, nil
}

// applicationsOf lists the Applications, in every namespace, whose AppProject
// is project, sorted by namespace and name.
func (h *Handler) applicationsOf(ctx context.Context, project string) ([]map[string]any, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(ApplicationGVK.GroupVersion().WithKind(ApplicationGVK.Kind + "List"))
	if err := h.reader.List(ctx, list, client.MatchingFields{ProjectIndexField: project}); err != nil {
		return nil, fmt.Errorf("list Applications of AppProject %q from cache: %w", project, err)
	}
	apps := make([]map[string]any, 0, len(list.Items))
	for i := range list.Items {
		// The index is authoritative, but a reader without one (or a stale
		// index entry) must not attribute another project's Applications.
		if projectName(list.Items[i].Object) == project {
			apps = append(apps, list.Items[i].Object)
		}
	}
	sortObjects(apps)
	return apps, nil
}
