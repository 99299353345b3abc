package webhook

import (
	"reflect"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestObjectMaps: a version of an object converts once; a new
// resourceVersion converts again, and an object without a uid every time.
func TestObjectMaps(t *testing.T) {
	var c objectMaps
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "argocd", UID: "u1", ResourceVersion: "1"}}
	proj.Spec.SourceRepos = []string{"https://a"}
	first, err := c.project(proj)
	if err != nil {
		t.Fatal(err)
	}
	if first["kind"] != v1alpha1.AppProjectKind || first["apiVersion"] != v1alpha1.GroupVersion.String() {
		t.Errorf("map = %v, want an AppProject's", first)
	}
	again, _ := c.project(proj.DeepCopy())
	if reflect.ValueOf(again).Pointer() != reflect.ValueOf(first).Pointer() {
		t.Error("the same version converted again")
	}

	changed := proj.DeepCopy()
	changed.ResourceVersion = "2"
	changed.Spec.SourceRepos = []string{"https://b"}
	m, _ := c.project(changed)
	if got := m["spec"].(map[string]any)["sourceRepos"]; !reflect.DeepEqual(got, []any{"https://b"}) {
		t.Errorf("a new version read %v, want its own sourceRepos", got)
	}

	noUID := proj.DeepCopy()
	noUID.UID = ""
	a, _ := c.project(noUID)
	b, _ := c.project(noUID)
	if reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() {
		t.Error("an object without a uid was kept")
	}
}

// TestObjectMapsBounded: past maxObjectMaps, a new object takes the place
// of another.
func TestObjectMapsBounded(t *testing.T) {
	var c objectMaps
	for i := range maxObjectMaps + 10 {
		p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID(strconv.Itoa(i)), ResourceVersion: "1"}}
		if _, err := c.project(p); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n != maxObjectMaps {
		t.Errorf("%d maps kept, want %d", n, maxObjectMaps)
	}
}
