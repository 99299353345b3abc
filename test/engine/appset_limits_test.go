package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// hostileSet is listSet with TEMPLATE (replaced before use) executed in
// its Applications' names.
const hostileSet = `
spec:
  goTemplate: true
  generators:
  - list:
      elements: [{name: a}]
  template:
    metadata:
      name: '%[1]s-TEMPLATE{{.name}}'
    spec:
      project: '%[1]s'
      source: {repoURL: '%[3]s', targetRevision: %[4]s, path: apps/alpha}
      destination: {server: https://kubernetes.default.svc, namespace: '%[2]s'}
`

// TestApplicationSetTemplateLimits: ApplicationSet templates run in the
// repo-server's sandbox under the render limits. A template that loops
// for minutes and one that allocates without bound are stopped by the
// time and the memory limit (condition ErrorOccurred naming the limit, no
// Application written), and meanwhile an ordinary ApplicationSet created
// after them generates its Applications: the controller generates several
// ApplicationSets at once, so the stopped ones hold up no other.
func TestApplicationSetTemplateLimits(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	hostile := func(name, template string) *v1alpha1.ApplicationSet {
		return f.appSetNamed(argoNS, f.name+"-"+name, strings.Replace(hostileSet, "TEMPLATE", template, 1))
	}
	loop := hostile("loop", `{{ range until 2000 }}{{ range until 2000 }}{{ range until 2000 }}{{ end }}{{ end }}{{ end }}`)
	hog := hostile("hog", `{{ $s := repeat 1000000 "x" }}{{ range until 64 }}{{ $s = print $s $s }}{{ end }}`)
	start := time.Now()
	ok := f.appSetNamed(argoNS, f.name+"-ok", strings.Replace(listSet, "%[5]s",
		listElements(map[string]string{"name": "ok", "project": f.name, "repo": f.repoURL, "namespace": f.ns}), 1))
	waitGenerated(t, argoNS, ok, f.name+"-ok")
	took := time.Since(start)
	var live v1alpha1.ApplicationSet
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(loop), &live); err != nil {
		t.Fatal(err)
	}
	for _, c := range live.Status.Conditions {
		if strings.Contains(c.Message, "time limit") {
			t.Errorf("the ordinary ApplicationSet generated only after the looping one was stopped (%s after it was created): it waited for it", took)
		}
	}

	waitCondition(t, loop, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonErrorOccurred,
		"ApplicationSet generation stopped: it passed its time limit ("+renderTimeout.String()+")")
	waitCondition(t, hog, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonErrorOccurred,
		fmt.Sprintf("ApplicationSet generation stopped: it passed its memory limit (%d MiB)", renderMemory>>20))
	for _, set := range []*v1alpha1.ApplicationSet{loop, hog} {
		if apps := generated(t, argoNS, set); len(apps) > 0 {
			t.Errorf("applicationset %s generated %d Applications, want none", set.Name, len(apps))
		}
	}
	// Still serving: the ordinary one generates again after a change.
	edit(t, ok.DeepCopy(), func(s *v1alpha1.ApplicationSet) {
		s.Spec.Generators[0].List.Elements = nil
		elems := listElements(map[string]string{"name": "ok2", "project": f.name, "repo": f.repoURL, "namespace": f.ns})
		if err := json.Unmarshal([]byte(elems), &s.Spec.Generators[0].List.Elements); err != nil {
			t.Fatal(err)
		}
	})
	waitGenerated(t, argoNS, ok, f.name+"-ok2")
}
