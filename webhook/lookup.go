package webhook

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// ProjectIndexField is the cache field index on Applications by the name of
// their AppProject ("default" when spec.project is empty). IndexApplications
// registers it; the Handler lists through it.
const ProjectIndexField = "spec.project"

// IndexApplications registers ProjectIndexField on (typed) Applications
// with indexer (a manager's GetFieldIndexer(), or a cache). Call it before
// the cache starts.
func IndexApplications(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &v1alpha1.Application{}, ProjectIndexField, ProjectIndexValue); err != nil {
		return fmt.Errorf("index Applications by %s: %w", ProjectIndexField, err)
	}
	return nil
}

// ProjectIndexValue is the indexer function of ProjectIndexField: an
// Application's ProjectName.
func ProjectIndexValue(obj client.Object) []string {
	app, ok := obj.(*v1alpha1.Application)
	if !ok {
		return nil
	}
	return []string{app.ProjectName()}
}

// getProject reads the AppProject name from the Argo CD namespace in the
// cache, or from the API server when the cache lacks it and an APIReader
// is set; nil without error when it does not exist.
func (h *Handler) getProject(ctx context.Context, name string) (*v1alpha1.AppProject, error) {
	proj := &v1alpha1.AppProject{}
	key := types.NamespacedName{Namespace: h.argocdNS, Name: name}
	from, err := "cache", h.reader.Get(ctx, key, proj)
	if apierrors.IsNotFound(err) && h.apiReader != nil {
		from, err = "the API server", h.apiReader.Get(ctx, key, proj)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get AppProject %s/%s from %s: %w", h.argocdNS, name, from, err)
	}
	return proj, nil
}

// getApplication reads an Application from the cache; nil without error
// when it does not exist.
func (h *Handler) getApplication(ctx context.Context, key types.NamespacedName) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if err := h.reader.Get(ctx, key, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get Application %s from cache: %w", key, err)
	}
	return app, nil
}

// applicationsOf lists the Applications, in every namespace, whose AppProject
// is project, sorted by namespace and name.
func (h *Handler) applicationsOf(ctx context.Context, project string) ([]*v1alpha1.Application, error) {
	list := &v1alpha1.ApplicationList{}
	if err := h.reader.List(ctx, list, client.MatchingFields{ProjectIndexField: project}); err != nil {
		return nil, fmt.Errorf("list Applications of AppProject %q from cache: %w", project, err)
	}
	apps := make([]*v1alpha1.Application, 0, len(list.Items))
	for i := range list.Items {
		// The index is authoritative, but a reader without one (or a stale
		// index entry) must not attribute another project's Applications.
		if list.Items[i].ProjectName() == project {
			apps = append(apps, &list.Items[i])
		}
	}
	slices.SortFunc(apps, func(a, b *v1alpha1.Application) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return apps, nil
}
