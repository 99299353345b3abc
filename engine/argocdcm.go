package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/go-logr/logr"

	"github.com/tollgate-dev/tollgate/engine/health"
)

// ArgoCDConfigMap is the name of Argo CD's settings ConfigMap in the
// control-plane namespace.
const ArgoCDConfigMap = "argocd-cm"

// WatchArgoCDConfigMap keeps checker's argocd-cm health checks
// (resource.customizations.health.*, resource.customizations) in step with
// the ConfigMap argocd-cm of namespace until ctx ends: read when it starts
// and again on every change; a deleted ConfigMap removes them. Settings
// that do not parse keep the previous checks, and the error is logged.
// It returns once the first read is done.
func WatchArgoCDConfigMap(ctx context.Context, cfg *rest.Config, namespace string, checker *health.Checker) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("watch %s: %w", ArgoCDConfigMap, err)
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("configmap", namespace+"/"+ArgoCDConfigMap)
	apply := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			checker.SetOverrides(nil)
			return
		}
		scripts, err := health.ParseArgoCDConfigMap(cm.Data)
		if err != nil {
			log.Error(err, "argocd-cm health customizations not applied")
			return
		}
		checker.SetOverrides(scripts)
		log.V(1).Info("argocd-cm health customizations applied", "kinds", len(scripts))
	}
	lw := toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", namespace,
		fields.OneTermEqualSelector(metav1.ObjectNameField, ArgoCDConfigMap))
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, toolscache.Indexers{})
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    apply,
		UpdateFunc: func(_, obj any) { apply(obj) },
		DeleteFunc: func(any) { checker.SetOverrides(nil) },
	}); err != nil {
		return fmt.Errorf("watch %s: %w", ArgoCDConfigMap, err)
	}
	go inf.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watch %s: %w", ArgoCDConfigMap, ctx.Err())
	}
	return nil
}
