package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func TestDecodeApplication(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    v1alpha1.Application
		wantErr string
	}{
		{
			name: "fields rendering reads",
			doc: `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: argocd
  labels: {version: 2}
spec:
  project: p
  source:
    repoURL: https://example.com/r
    repourl: ignored, keys match exactly
    unknownField: ignored
    kustomize: {replicas: [{name: web, count: 2}, {name: api, count: "3"}]}
    plugin: {name: x}
    directory: {jsonnet: null}
  syncPolicy: {retry: {limit: 5, backoff: {factor: 2}}}
  destination: {namespace: web}
  revisionHistoryLimit: 3.0
status: {sync: {status: 7}}
`,
			want: v1alpha1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"},
				Spec: v1alpha1.ApplicationSpec{
					Project: "p",
					Source: &v1alpha1.ApplicationSource{
						RepoURL: "https://example.com/r",
						Kustomize: &v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{
							{Name: "web", Count: intstr.FromInt32(2)},
							{Name: "api", Count: intstr.FromString("3")},
						}},
						Plugin:    &v1alpha1.ApplicationSourcePlugin{Name: "x"},
						Directory: &v1alpha1.ApplicationSourceDirectory{},
					},
					SyncPolicy:           &v1alpha1.SyncPolicy{Retry: &v1alpha1.RetryStrategy{Limit: 5, Backoff: &v1alpha1.Backoff{Factor: new(int64(2))}}},
					Destination:          v1alpha1.ApplicationDestination{Namespace: "web"},
					RevisionHistoryLimit: new(int64(3)),
				},
			},
		},
		{
			name:    "name not a string",
			doc:     "metadata: {name: 3}\n",
			wantErr: "metadata.name: want a string, got a number",
		},
		{
			name:    "metadata not an object",
			doc:     "metadata: web\n",
			wantErr: "metadata: want an object, got a string",
		},
		{
			name:    "fractional integer",
			doc:     "spec: {syncPolicy: {retry: {limit: 1.5}}}\n",
			wantErr: "spec.syncPolicy.retry.limit: want an integer, got a number",
		},
		{
			name:    "boolean as a string",
			doc:     "spec: {source: {directory: {recurse: \"true\"}}}\n",
			wantErr: "spec.source.directory.recurse: want a boolean, got a string",
		},
		{
			name:    "list element of the wrong type",
			doc:     "spec: {sources: [{repoURL: a}, b]}\n",
			wantErr: "spec.sources[1]: want an object, got a string",
		},
		{
			name:    "field of a later list element",
			doc:     "spec: {sources: [{repoURL: a, path: b}, {repoURL: c, path: 3}]}\n",
			wantErr: "spec.sources[1].path: want a string, got a number",
		},
		{
			name:    "list in a list",
			doc:     "spec: {sources: [[a]]}\n",
			wantErr: "spec.sources[0]: want an object, got a list",
		},
		{
			name:    "list element of a list of strings",
			doc:     "spec: {source: {helm: {valueFiles: [a.yaml, 3]}}}\n",
			wantErr: "spec.source.helm.valueFiles[1]: want a string, got a number",
		},
		{
			name:    "object for a string",
			doc:     "spec: {source: {path: {a: b}}}\n",
			wantErr: "spec.source.path: want a string, got an object",
		},
		{
			name:    "map value",
			doc:     "spec: {source: {kustomize: {commonLabels: {a: b, c: {d: e}}}}}\n",
			wantErr: "spec.source.kustomize.commonLabels.c: want a string, got an object",
		},
		{
			// Both counts are numbers: the element is told by the number.
			name:    "fractional replica count",
			doc:     "spec: {source: {kustomize: {replicas: [{name: a, count: 2}, {name: b, count: 1.5}]}}}\n",
			wantErr: "spec.source.kustomize.replicas[1].count: want an integer or a string, got a number",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc
			if tt.wantErr != "" {
				doc = "apiVersion: argoproj.io/v1alpha1\nkind: Application\n" + doc
			}
			got, err := decodeApplication(decodeApp(t, doc))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("application mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
