package engine_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestRenderLimitCostsOneApplication: a tenant pushes a chart that loops
// forever next to a healthy Application. The looping render is killed at
// the sandbox's time limit and reported on its Application as a
// ComparisonError naming the limit; the controller keeps running and the
// other Application syncs.
func TestRenderLimitCostsOneApplication(t *testing.T) {
	files := baseFiles()
	files["loop/Chart.yaml"] = "apiVersion: v2\nname: loop\nversion: 0.1.0\n"
	files["loop/templates/cm.yaml"] = "{{- range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}\n"
	f := newFixture(t, files)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	loop := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: f.name + "-loop", Namespace: f.cp},
		Spec: v1alpha1.ApplicationSpec{
			Project:     f.name,
			Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: "loop", TargetRevision: gitserver.DefaultBranch},
			Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: f.ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	f.create(loop)
	want := "render stopped: it passed its time limit (" + renderTimeout.String() + ")"
	eventually(t, "the looping Application reports a ComparisonError naming the time limit", func() (bool, string) {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(loop), loop); err != nil {
			return false, err.Error()
		}
		msg, ok := condition(loop, v1alpha1.ApplicationConditionComparisonError)
		return ok && strings.Contains(msg, want), describeApp(loop)
	})
	f.waitSynced(f.head)
	if len(loop.Status.Resources) != 0 || loop.Status.OperationState != nil {
		t.Errorf("the looping Application synced something: %s", describeApp(loop))
	}
}
