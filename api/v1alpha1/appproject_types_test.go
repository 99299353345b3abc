package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestResourceListsKeepEmptyApartFromMissing decodes AppProject specs as the
// API server returns them and converts them back the two ways tollgate does
// (encoding/json, and the unstructured converter the engine gate uses): a
// missing resource list stays missing and an empty one stays [], since Argo
// CD permits every namespaced kind without namespaceResourceWhitelist and
// none with [].
func TestResourceListsKeepEmptyApartFromMissing(t *testing.T) {
	lists := []string{
		"clusterResourceWhitelist",
		"clusterResourceBlacklist",
		"namespaceResourceWhitelist",
		"namespaceResourceBlacklist",
	}
	for _, list := range lists {
		for _, tc := range []struct {
			name string
			spec string
			want map[string]any // the spec's resource lists after conversion
		}{
			{
				name: "missing stays missing",
				spec: `{}`,
				want: map[string]any{},
			},
			{
				name: "null is missing",
				spec: `{"` + list + `": null}`,
				want: map[string]any{},
			},
			{
				name: "empty stays empty",
				spec: `{"` + list + `": []}`,
				want: map[string]any{list: []any{}},
			},
			{
				name: "entries stay",
				spec: `{"` + list + `": [{"group": "", "kind": "Namespace"}]}`,
				want: map[string]any{list: []any{map[string]any{"group": "", "kind": "Namespace"}}},
			},
		} {
			t.Run(list+"/"+tc.name, func(t *testing.T) {
				var proj AppProject
				if err := json.Unmarshal([]byte(`{"metadata": {"name": "team"}, "spec": `+tc.spec+`}`), &proj); err != nil {
					t.Fatalf("decode: %v", err)
				}
				data, err := json.Marshal(&proj)
				if err != nil {
					t.Fatalf("encode: %v", err)
				}
				var viaJSON map[string]any
				if err := json.Unmarshal(data, &viaJSON); err != nil {
					t.Fatalf("decode encoded: %v", err)
				}
				viaConverter, err := runtime.DefaultUnstructuredConverter.ToUnstructured(proj.DeepCopy())
				if err != nil {
					t.Fatalf("convert: %v", err)
				}
				for door, m := range map[string]map[string]any{"encoding/json": viaJSON, "converter": viaConverter} {
					spec, _ := m["spec"].(map[string]any)
					got := map[string]any{}
					for _, l := range lists {
						if v, ok := spec[l]; ok {
							got[l] = v
						}
					}
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("%s: resource lists (-want +got):\n%s", door, diff)
					}
				}
			})
		}
	}
}

// TestClusterResourceRestrictionItemName keeps the name pattern of cluster
// resource list entries (Argo CD 3.x) and leaves it out when empty.
func TestClusterResourceRestrictionItemName(t *testing.T) {
	for _, tc := range []struct {
		name string
		item ClusterResourceRestrictionItem
		want string
	}{
		{name: "with name", item: ClusterResourceRestrictionItem{Kind: "Namespace", Name: "team1-*"}, want: `{"group":"","kind":"Namespace","name":"team1-*"}`},
		{name: "without name", item: ClusterResourceRestrictionItem{Kind: "Namespace"}, want: `{"group":"","kind":"Namespace"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.item)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
		})
	}
}
