package applicationset

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestRequeueAfter: git generators shorten the 3-minute requeue (never
// lengthen it); a pull request generator, which asks a rate-limited API,
// polls every 30 minutes unless it or a git generator says sooner.
func TestRequeueAfter(t *testing.T) {
	const pr = `{pullRequest: {github: {owner: o, repo: r}}}`
	r := &Reconciler{opts: Options{Requeue: DefaultRequeue}}
	for name, tc := range map[string]struct {
		generators string
		want       time.Duration
	}{
		"list only":               {`[{list: {elements: []}}]`, DefaultRequeue},
		"git default":             {`[{git: {repoURL: r, revision: main}}]`, DefaultRequeue},
		"git longer":              {`[{git: {repoURL: r, revision: main, requeueAfterSeconds: 3600}}]`, DefaultRequeue},
		"git requeue":             {`[{git: {repoURL: r, revision: main, requeueAfterSeconds: 30}}, {git: {repoURL: r, revision: main}}]`, 30 * time.Second},
		"nested in matrix":        {`[{matrix: {generators: [{list: {elements: []}}, {git: {repoURL: r, revision: main, requeueAfterSeconds: 10}}]}}]`, 10 * time.Second},
		"nested in a merge":       {`[{merge: {mergeKeys: [a], generators: [{matrix: {generators: [{git: {repoURL: r, revision: main, requeueAfterSeconds: 5}}]}}]}}]`, 5 * time.Second},
		"pull request default":    {`[` + pr + `]`, DefaultSCMRequeue},
		"pull request with list":  {`[{list: {elements: []}}, ` + pr + `]`, DefaultSCMRequeue},
		"pull request requeue":    {`[{pullRequest: {github: {owner: o, repo: r}, requeueAfterSeconds: 7200}}]`, 2 * time.Hour},
		"plugin default":          {`[{plugin: {configMapRef: {name: p}}}]`, DefaultPluginRequeue},
		"cluster decisions":       {`[{clusterDecisionResource: {configMapRef: c, name: n, requeueAfterSeconds: 20}}]`, 20 * time.Second},
		"pull request beside git": {`[{matrix: {generators: [` + pr + `, {git: {repoURL: r, revision: main}}]}}]`, DefaultRequeue},
	} {
		t.Run(name, func(t *testing.T) {
			var set v1alpha1.ApplicationSet
			if err := yaml.Unmarshal([]byte("spec: {generators: "+tc.generators+"}"), &set); err != nil {
				t.Fatal(err)
			}
			if got := r.requeueAfter(&set); got != tc.want {
				t.Errorf("requeueAfter = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestAppSetConditions: the three conditions of Argo CD in each outcome,
// a denial by the gate named before validation errors.
func TestAppSetConditions(t *testing.T) {
	byType := func(p *appSetPass) map[v1alpha1.ApplicationSetConditionType]v1alpha1.ApplicationSetCondition {
		out := map[v1alpha1.ApplicationSetConditionType]v1alpha1.ApplicationSetCondition{}
		for _, c := range p.conditions() {
			out[c.Type] = c
		}
		return out
	}
	ok := byType(&appSetPass{generated: true})
	if c := ok[v1alpha1.ApplicationSetConditionResourcesUpToDate]; c.Status != v1alpha1.ApplicationSetConditionStatusTrue || c.Message != "ApplicationSet up to date" {
		t.Errorf("all well: ResourcesUpToDate %+v", c)
	}
	if c := ok[v1alpha1.ApplicationSetConditionErrorOccurred]; c.Status != v1alpha1.ApplicationSetConditionStatusFalse || c.Reason != v1alpha1.ApplicationSetReasonApplicationSetUpToDate {
		t.Errorf("all well: ErrorOccurred %+v", c)
	}

	failed := &appSetPass{}
	_ = failed.fail(v1alpha1.ApplicationSetReasonRenderTemplateParamsError, errTest("bad template"))
	fc := byType(failed)
	if c := fc[v1alpha1.ApplicationSetConditionParametersGenerated]; c.Status != v1alpha1.ApplicationSetConditionStatusFalse || c.Message != "bad template" {
		t.Errorf("generation failed: ParametersGenerated %+v", c)
	}
	if c := fc[v1alpha1.ApplicationSetConditionErrorOccurred]; c.Status != v1alpha1.ApplicationSetConditionStatusTrue || c.Reason != v1alpha1.ApplicationSetReasonRenderTemplateParamsError {
		t.Errorf("generation failed: ErrorOccurred %+v", c)
	}

	denied := byType(&appSetPass{generated: true, invalid: []string{"application references project x which does not exist"}, denied: []string{"Application a ... [no-argocd-destination]"}})
	c := denied[v1alpha1.ApplicationSetConditionErrorOccurred]
	if c.Reason != v1alpha1.ApplicationSetReasonPolicyViolation || !strings.HasPrefix(c.Message, "Application a") || !strings.Contains(c.Message, "project x") {
		t.Errorf("denied and invalid: ErrorOccurred %+v", c)
	}
	if c := denied[v1alpha1.ApplicationSetConditionParametersGenerated]; c.Status != v1alpha1.ApplicationSetConditionStatusTrue {
		t.Errorf("denied: ParametersGenerated %+v", c)
	}

	// A condition that did not change keeps its transition time.
	then, now := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	prev := mergeAppSetConditions(nil, (&appSetPass{generated: true}).conditions(), then)
	next := mergeAppSetConditions(prev, (&appSetPass{generated: true}).conditions(), now)
	if !next[0].LastTransitionTime.Equal(&then) {
		t.Errorf("unchanged condition: transition time %v, want %v", next[0].LastTransitionTime, then)
	}
	next = mergeAppSetConditions(prev, failed.conditions(), now)
	if !next[0].LastTransitionTime.Equal(&now) {
		t.Errorf("changed condition: transition time %v, want %v", next[0].LastTransitionTime, now)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
