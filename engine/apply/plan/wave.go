package plan

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// WaveOf returns the sync wave of obj: `argocd.argoproj.io/sync-wave` if
// set, else `helm.sh/hook-weight`, else 0. A value that is not an integer is
// an error naming the annotation.
func WaveOf(obj *unstructured.Unstructured) (int, error) {
	ann := obj.GetAnnotations()
	for _, key := range []string{AnnotationSyncWave, AnnotationHelmHookWeight} {
		v, ok := ann[key]
		if !ok {
			continue
		}
		w, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("annotation %s: %q is not an integer", key, v)
		}
		return w, nil
	}
	return 0, nil
}
