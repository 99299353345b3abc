package application

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/go-logr/logr"
	"github.com/tollgate-dev/tollgate/engine/argocd"
)

// ArgoCDConfigMap is the name of Argo CD's settings ConfigMap in the
// control-plane namespace.
const ArgoCDConfigMap = "argocd-cm"

// WatchArgoCDConfigMap calls apply with the data of the ConfigMap argocd-cm
// of namespace when it starts and on every change until ctx ends (nil data
// when there is none or it is deleted). An error from apply is logged; the
// settings it could not apply stay as they were. It returns once the first
// read is done.
func WatchArgoCDConfigMap(ctx context.Context, cfg *rest.Config, namespace string, apply func(map[string]string) error) error {
	log := logr.FromContextOrDiscard(ctx).WithValues("configmap", namespace+"/"+ArgoCDConfigMap)
	return argocd.WatchNamed(ctx, cfg, "configmaps", namespace, ArgoCDConfigMap, &corev1.ConfigMap{}, func(obj runtime.Object) {
		var data map[string]string
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			data = cm.Data
		}
		if err := apply(data); err != nil {
			log.Error(err, "argocd-cm settings not applied")
			return
		}
		log.V(1).Info("argocd-cm settings applied")
	})
}

// KustomizeBuildOptions are argocd-cm's kustomize.buildOptions as the
// reconciler last read them, for the other readers of Kustomize sources
// (notifications' repo.GetAppDetails).
func (r *Reconciler) KustomizeBuildOptions() string {
	if s := r.settings.Load(); s != nil {
		return s.KustomizeBuildOptions
	}
	return ""
}

// ApplyArgoCDConfigMap applies the Settings of argocd-cm's data (nil:
// none), health checks included. When they do not parse, nothing changes.
// When they changed, every Application is compared in full with them on
// its next pass.
func (r *Reconciler) ApplyArgoCDConfigMap(data map[string]string) error {
	settings, err := ParseSettings(data)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.settingsGen.Load() > 0 && reflect.DeepEqual(&settings, r.settings.Load()) {
		return nil
	}
	r.health.SetOverrides(settings.HealthChecks)
	r.settings.Store(&settings)
	r.settingsGen.Add(1)
	return nil
}
