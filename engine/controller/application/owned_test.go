package application

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
)

// TestCachedMetadataKeepsOwnership: what the metadata cache keeps of an
// object (keepResourceVersion) gives the tracking index, and OwnedBy, the
// answers the whole object gives.
func TestCachedMetadataKeepsOwnership(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "u1"}, {APIVersion: "v1", Kind: "Node", Name: "n"}}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		labels      map[string]string
		owners      []metav1.OwnerReference
		index       []string
	}{
		{name: "tracking id", annotations: map[string]string{v1alpha1.AnnotationKeyTrackingID: "shop:/ConfigMap:team/cm", "other": "x"}, index: []string{"shop"}},
		{name: "tracking id of a copy", annotations: map[string]string{v1alpha1.AnnotationKeyTrackingID: "shop:/ConfigMap:team/other"}, index: []string{"shop"}},
		{name: "instance label", labels: map[string]string{v1alpha1.LabelKeyAppInstance: "shop", "team": "a"}, index: []string{"shop"}},
		{name: "instance label of an owned object", labels: map[string]string{v1alpha1.LabelKeyAppInstance: "shop"}, owners: owner, index: []string{"shop"}},
		{name: "annotation decides over the label", annotations: map[string]string{v1alpha1.AnnotationKeyTrackingID: "web:/ConfigMap:team/cm"}, labels: map[string]string{v1alpha1.LabelKeyAppInstance: "shop"}, index: []string{"web"}},
		{name: "untracked", labels: map[string]string{"team": "a"}, owners: owner},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "team", ResourceVersion: "7",
				Annotations: tc.annotations, Labels: tc.labels, OwnerReferences: tc.owners}}
			md.SetGroupVersionKind(gvk)
			whole, err := apply.MetadataObject(gvk, md.ObjectMeta.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			kept, err := keepResourceVersion(md)
			if err != nil {
				t.Fatal(err)
			}
			cached := kept.(*metav1.PartialObjectMetadata)
			if got := trackingInstance(cached); !slices.Equal(got, tc.index) {
				t.Errorf("trackingInstance() = %v, want %v", got, tc.index)
			}
			u, err := apply.MetadataObject(gvk, &cached.ObjectMeta)
			if err != nil {
				t.Fatal(err)
			}
			for _, method := range []v1alpha1.TrackingMethod{v1alpha1.TrackingMethodAnnotation, v1alpha1.TrackingMethodLabel, v1alpha1.TrackingMethodAnnotationAndLabel} {
				for _, app := range []string{"shop", "web"} {
					want := v1alpha1.OwnedBy(whole, app, method)
					if got := v1alpha1.OwnedBy(u, app, method); got != want {
						t.Errorf("OwnedBy(cached, %s, %s) = %v, the whole object's %v", app, method, got, want)
					}
					if want && !slices.Contains(tc.index, app) {
						t.Errorf("%s owns the object under %s but the index does not name it", app, method)
					}
				}
			}
		})
	}
}
