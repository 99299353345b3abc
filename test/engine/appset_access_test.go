package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// privateFilesSet is an ApplicationSet whose git files generator reads
// PRIVATE, for the project PROJECT (both replaced before f.expand).
const privateFilesSet = `
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: PRIVATE
      revision: %[4]s
      files: [{path: 'teams/*/config.json'}]
  template:
    metadata: {name: '%[1]s-{{.team}}'}
    spec:
      project: PROJECT
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`

// TestApplicationSetGitGeneratorRepositoryDenied: generators are judged
// before they read. An ApplicationSet of team-a (in appSetNS, which
// team-a's project lists in sourceNamespaces) whose git generator names
// the platform's private repository is refused, whether its template
// names team-a's project (which does not permit the repository), the
// platform's (to borrow its credentials: it does not permit appSetNS) or
// a project that depends on parameters (no project appSetNS may name
// permits the repository): condition ErrorOccurred naming the generator,
// the repository and the project, no Application, and the Git server saw
// no request for the repository. The same ApplicationSet in the control
// namespace, for the platform's project, reads it with the platform's
// project-scoped credentials; its Application, denied by the gate, is
// described by the file it came from, never by the file's content.
func TestApplicationSetGitGeneratorRepositoryDenied(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.editProject = func(p *v1alpha1.AppProject) { p.Spec.SourceNamespaces = []string{appSetNS} }
	f.project()

	// The platform's private repository, on a Git server that requires
	// credentials, which only a repository Secret scoped to the
	// platform's project holds.
	const secret = "hunter2-platform-database"
	private := gitserver.New(t, gitserver.WithBasicAuth("platform-bot", "pl4tform"))
	privateURL := private.CreateRepo(t, "secrets", map[string]string{
		"teams/red/config.json": `{"team": "red", "password": "` + secret + `"}`,
	})
	platform := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: f.name + "-platform", Namespace: argoNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{privateURL},
			Destinations: []v1alpha1.ApplicationDestination{{Server: inCluster, Namespace: f.ns}},
		},
	}
	f.create(platform)
	f.create(repositorySecret(argoNS, f.name+"-platform-repo", map[string]string{
		"url": privateURL, "username": "platform-bot", "password": "pl4tform", "project": platform.Name,
	}))

	manifest := func(project string) string {
		return strings.NewReplacer("PRIVATE", privateURL, "PROJECT", project).Replace(privateFilesSet)
	}
	cases := []struct {
		name, project, want string
	}{{
		name:    "own",
		project: f.name,
		want: fmt.Sprintf(`spec.generators[0].git reads repository %q, which AppProject %q does not permit; nothing was read: use a repository listed in the project's spec.sourceRepos or add this one there`,
			privateURL, f.name),
	}, {
		name:    "borrowed",
		project: platform.Name,
		want: fmt.Sprintf(`spec.generators[0].git reads repository %q for AppProject %q, which does not permit the ApplicationSets and Applications of namespace %q (spec.sourceNamespaces); nothing was read`,
			privateURL, platform.Name, appSetNS),
	}, {
		name:    "templated",
		project: `'{{ default "` + platform.Name + `" .project }}'`,
		want: fmt.Sprintf(`spec.generators[0].git reads repository %q, which no AppProject this ApplicationSet may name permits (its template's project depends on parameters); nothing was read`,
			privateURL),
	}}
	var sets []*v1alpha1.ApplicationSet
	for _, tc := range cases {
		set := f.appSetNamed(appSetNS, f.name+"-"+tc.name, manifest(tc.project))
		sets = append(sets, set)
		waitCondition(t, set, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue,
			v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, tc.want)
		waitCondition(t, set, v1alpha1.ApplicationSetConditionParametersGenerated, v1alpha1.ApplicationSetConditionStatusFalse,
			v1alpha1.ApplicationSetReasonErrorOccurred, tc.want)
	}
	consistently(t, "nothing generated, nothing fetched, nothing quoted", 3*time.Second, func() (bool, string) {
		if n := private.Fetches("secrets"); n != 0 {
			return false, fmt.Sprintf("%d requests to read the private repository", n)
		}
		for _, set := range sets {
			if apps := generated(t, appSetNS, set); len(apps) != 0 {
				return false, fmt.Sprintf("applicationset %s generated %d applications", set.Name, len(apps))
			}
			if status := describeSet(t, set); strings.Contains(status, secret) {
				return false, "the file's content is in the status: " + status
			}
		}
		return true, ""
	})

	// From the control namespace the platform's project may be named:
	// the repository is read with its credentials. The Application is
	// denied (the project does not permit its source) and the denial
	// names the file, not what it holds.
	admin := f.appSetNamed(argoNS, f.name+"-admin", manifest(platform.Name))
	live := waitCondition(t, admin, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue,
		v1alpha1.ApplicationSetReasonPolicyViolation,
		"Application "+f.name+"-red from spec.generators[0] with parameters read from teams/red/config.json of "+privateURL+" (content not quoted) was not written",
		"[project-source-denied]")
	if n := private.Fetches("secrets"); n == 0 {
		t.Errorf("the control namespace's ApplicationSet did not read the platform's repository")
	}
	for _, c := range live.Status.Conditions {
		if strings.Contains(c.Message, secret) || strings.Contains(c.Message, `"password"`) {
			t.Errorf("condition %s quotes the file's content: %s", c.Type, c.Message)
		}
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name + "-red"}, &v1alpha1.Application{}); err == nil {
		t.Errorf("the denied application was written")
	}
}
