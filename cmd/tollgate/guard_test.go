package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// The guard tests are issue #10's table of bypass attempts at the CLI
// door: a tenant writes the repository, so nothing in it (an annotation on
// an object, however it is rendered, on the Application, or a CRD) may take
// the team out of its AppProject or into a protected namespace. Only the
// AppProject and the operator's --config exempt from a boundary rule; an
// object still exempts itself from a hygiene rule unless the operator
// turned object exemptions off.

// guardRepoURL is the repository under test of the guard tests.
const guardRepoURL = "https://git.example.com/acme/guard.git"

// teamProject permits the namespace team of the in-cluster server and no
// cluster-scoped resources; annotations (YAML flow mapping entries, e.g.
// `tollgate.dev/exempt: x`) go on its metadata.
func teamProject(annotations string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team
  namespace: argocd
  annotations: {` + annotations + `}
spec:
  sourceRepos: ["` + guardRepoURL + `"]
  destinations:
    - server: https://kubernetes.default.svc
      namespace: team
`
}

// wideProject is the pattern the README once showed: every namespace but
// Argo CD's.
const wideProject = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: wide
  namespace: argocd
spec:
  sourceRepos: ["*"]
  destinations:
    - {server: "*", namespace: "*"}
    - {server: "*", namespace: "!argocd"}
`

// guardApp is an Application of project rendering path of the repository
// under test into namespace; annotations as for teamProject.
func guardApp(name, project, path, namespace, annotations string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
  annotations: {%s}
spec:
  project: %s
  source:
    repoURL: %s
    path: %s
  destination:
    server: https://kubernetes.default.svc
    namespace: %s
`, name, annotations, project, guardRepoURL, path, namespace)
}

// adminBinding is a ClusterRoleBinding of the team's default ServiceAccount
// to cluster-admin; annotations as for teamProject.
func adminBinding(annotations string) string {
	return `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: team-admin
  annotations: {` + annotations + `}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: default
    namespace: team
`
}

// webDeployment is a Deployment "web" in namespace (none when empty)
// running image; annotations as for teamProject.
func webDeployment(namespace, image, annotations string) string {
	ns := ""
	if namespace != "" {
		ns = "\n  namespace: " + namespace
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web` + ns + `
  annotations: {` + annotations + `}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: ` + image + `
`
}

// Exact report lines that several cases share.

// bindingDenied is the DENY line of the ClusterRoleBinding "name" of app in
// the team project at file:line (file alone for Helm output).
func bindingDenied(where, name, app string) string {
	return fmt.Sprintf(`DENY  %s  ClusterRoleBinding/%s  [project-resource-denied] ClusterRoleBinding %q of Application %q is a cluster-scoped resource "rbac.authorization.k8s.io/ClusterRoleBinding" and AppProject "team" has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding"} (app %s)`,
		where, name, name, app, app)
}

// boundaryExemptionRefused is the exemption-not-allowed line of an object
// naming rule in its annotation; suffix is " (app X)" for rendered objects.
func boundaryExemptionRefused(where, kind, name, rule, suffix string) string {
	return fmt.Sprintf(`DENY  %s  %s/%s  [exemption-not-allowed] %s %q names the boundary rule(s) %q in its tollgate.dev/exempt annotation, which exempts nothing from them; only the operator's configuration (exemptions:) or the AppProject's tollgate.dev/exempt annotation can exempt from a boundary rule%s`,
		where, kind, name, kind, name, rule, suffix)
}

// objectExemptionsOff is the operator's configuration turning object
// exemptions off.
const objectExemptionsOff = "allowObjectExemptions: false\n"

// operatorExemption exempts the team's ClusterRoleBindings from
// project-resource-denied.
const operatorExemption = `exemptions:
  - rules: [project-resource-denied]
    project: team
    kind: ClusterRoleBinding
    reason: the team's admin binding, reviewed by the platform team
`

func TestGuard(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		// config is the --config file's content, "" for none.
		config string
		// projects are --project files, kept outside the repository.
		projects []string
		wantCode int
		// wantLines are the DENY and WARN lines of the text report.
		wantLines []string
		// wantNotes are the lines of stderr.
		wantNotes []string
	}{
		// Object annotations never exempt from a boundary rule.
		{
			name: "raw manifest exempt from every rule",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/rbac.yaml":     guardApp("rbac", "team", "rbac", "team", ""),
				"rbac/crb.yaml":      adminBinding(`tollgate.dev/exempt: "*"`),
			},
			wantCode:  exitDenied,
			wantLines: []string{bindingDenied("rbac/crb.yaml:2", "team-admin", "rbac")},
		},
		{
			name: "raw manifest exempt from the boundary rule",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/rbac.yaml":     guardApp("rbac", "team", "rbac", "team", ""),
				"rbac/crb.yaml":      adminBinding(`tollgate.dev/exempt: project-resource-denied`),
			},
			wantCode: exitDenied,
			wantLines: []string{
				boundaryExemptionRefused("rbac/crb.yaml:5", "ClusterRoleBinding", "team-admin", "project-resource-denied", " (app rbac)"),
				bindingDenied("rbac/crb.yaml:2", "team-admin", "rbac"),
			},
		},
		{
			name: "kustomize overlay commonAnnotations",
			files: map[string]string{
				"projects/team.yaml":         teamProject(""),
				"apps/overlay.yaml":          guardApp("overlay", "team", "overlay", "team", ""),
				"base/kustomization.yaml":    "resources: [crb.yaml]\n",
				"base/crb.yaml":              adminBinding(""),
				"overlay/kustomization.yaml": "resources: [../base]\ncommonAnnotations:\n  tollgate.dev/exempt: project-resource-denied\n",
			},
			wantCode: exitDenied,
			wantLines: []string{
				boundaryExemptionRefused("base/crb.yaml:1", "ClusterRoleBinding", "team-admin", "project-resource-denied", " (app overlay)"),
				bindingDenied("base/crb.yaml:2", "team-admin", "overlay"),
			},
		},
		{
			name: "application kustomize commonAnnotations",
			files: map[string]string{
				"projects/team.yaml":      teamProject(""),
				"base/kustomization.yaml": "resources: [crb.yaml]\n",
				"base/crb.yaml":           adminBinding(""),
				"apps/base.yaml": strings.Replace(guardApp("base", "team", "base", "team", ""), "    path: base\n",
					"    path: base\n    kustomize:\n      commonAnnotations: {tollgate.dev/exempt: \"*\"}\n", 1),
			},
			wantCode:  exitDenied,
			wantLines: []string{bindingDenied("base/crb.yaml:2", "team-admin", "base")},
		},
		{
			name: "helm chart template",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/admin.yaml":    guardApp("admin", "team", "chart", "team", ""),
				"chart/Chart.yaml":   "apiVersion: v2\nname: admin\nversion: 0.1.0\n",
				"chart/values.yaml":  "exempt: project-resource-denied\n",
				"chart/templates/crb.yaml": strings.NewReplacer(
					"name: team-admin", "name: {{ .Release.Name }}-admin",
					"annotations: {}", "annotations: {tollgate.dev/exempt: {{ .Values.exempt | quote }}}",
				).Replace(adminBinding("")),
			},
			wantCode: exitDenied,
			wantLines: []string{
				boundaryExemptionRefused("chart/templates/crb.yaml", "ClusterRoleBinding", "admin-admin", "project-resource-denied", " (app admin)"),
				bindingDenied("chart/templates/crb.yaml", "admin-admin", "admin"),
			},
		},
		{
			name: "application exempt from its destination",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/away.yaml":     guardApp("away", "team", "away", "elsewhere", "tollgate.dev/exempt: project-destination-denied"),
				"away/web.yaml":      webDeployment("", "nginx:1.27.3", ""),
			},
			wantCode: exitDenied,
			wantLines: []string{
				boundaryExemptionRefused("apps/away.yaml:7", "Application", "away", "project-destination-denied", ""),
				`DENY  apps/away.yaml:13  Application/away  [project-destination-denied] Application "away" has destination (server "https://kubernetes.default.svc", namespace "elsewhere"), which AppProject "team" does not permit; deploy to a destination listed in the project's spec.destinations or add this one there`,
				`DENY  away/web.yaml:1  Deployment/web  [project-destination-denied] Deployment "web" of Application "away" has destination (server "https://kubernetes.default.svc", namespace "elsewhere"), which AppProject "team" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there (app away)`,
			},
		},

		// Protected namespaces, whatever the project permits.
		{
			name: "application into tollgate-system",
			files: map[string]string{
				"apps/into.yaml": guardApp("into", "wide", "web", "tollgate-system", `tollgate.dev/exempt: "*"`),
				"web/web.yaml":   webDeployment("", "nginx:1.27.3", ""),
			},
			projects: []string{wideProject},
			wantCode: exitDenied,
			wantLines: []string{
				`DENY  apps/into.yaml:15  Application/into  [protected-namespace] Application "into" deploys into the protected namespace "tollgate-system"; set spec.destination.namespace to a namespace of the team`,
				`DENY  web/web.yaml:1  Deployment/web  [protected-namespace] Deployment "web" of Application "into" lands in the protected namespace "tollgate-system"; deploy it into a namespace of the team (app into)`,
			},
		},
		{
			name: "application into kube-system",
			files: map[string]string{
				"apps/into.yaml": guardApp("into", "wide", "web", "kube-system", `tollgate.dev/exempt: "*"`),
				"web/web.yaml":   webDeployment("", "nginx:1.27.3", ""),
			},
			projects: []string{wideProject},
			wantCode: exitDenied,
			wantLines: []string{
				`DENY  apps/into.yaml:15  Application/into  [protected-namespace] Application "into" deploys into the protected namespace "kube-system"; set spec.destination.namespace to a namespace of the team`,
				`DENY  web/web.yaml:1  Deployment/web  [protected-namespace] Deployment "web" of Application "into" lands in the protected namespace "kube-system"; deploy it into a namespace of the team (app into)`,
			},
		},
		{
			name: "pod mounting tollgate's service account",
			files: map[string]string{
				"projects/wide.yaml": wideProject,
				"apps/tools.yaml":    guardApp("tools", "wide", "tools", "team", ""),
				"tools/pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: takeover
  namespace: tollgate-system
  annotations: {tollgate.dev/exempt: "*"}
spec:
  serviceAccountName: tollgate-controller
  containers:
    - name: shell
      image: busybox:1.37.0
`,
			},
			wantCode: exitDenied,
			wantLines: []string{
				`DENY  projects/wide.yaml:9  AppProject/wide  [protected-namespace] AppProject "wide" permits the protected namespace(s) "tollgate-system", "kube-system", "kube-public", "kube-node-lease" through spec.destinations[0] (namespace "*"); add a "!" entry such as {server: "*", namespace: "!tollgate-system"} for each to spec.destinations or narrow the namespace pattern`,
				`DENY  tools/pod.yaml:5  Pod/takeover  [protected-namespace] Pod "takeover" of Application "tools" lands in the protected namespace "tollgate-system"; deploy it into a namespace of the team (app tools)`,
			},
		},

		// Kinds: where the CLI cannot ask a cluster, a CRD in the
		// manifests never re-scopes a kind it knows.
		{
			name: "cluster-scoped kind of a known project",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/policy.yaml":   guardApp("policy", "team", "policy", "team", ""),
				"policy/policy.yaml": `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: allow-everything
  annotations: {tollgate.dev/exempt: "*"}
spec:
  validationFailureAction: Audit
  rules: []
`,
			},
			wantCode: exitDenied,
			wantLines: []string{
				`DENY  policy/policy.yaml:2  ClusterPolicy/allow-everything  [project-resource-denied] ClusterPolicy "allow-everything" of Application "policy" is a cluster-scoped resource "kyverno.io/ClusterPolicy" and AppProject "team" has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "kyverno.io", kind: "ClusterPolicy"} (app policy)`,
			},
		},
		{
			name: "kind without a CRD is noted",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/gizmo.yaml":    guardApp("gizmo", "team", "gizmo", "team", ""),
				"gizmo/gizmo.yaml":   "apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g\nspec: {}\n",
			},
			wantCode: exitOK,
			wantNotes: []string{
				"note: gizmo/gizmo.yaml:1: example.com/v1 Gizmo: cannot tell whether the kind is cluster-scoped (no CRD for it among the manifests); judged as namespaced",
			},
		},
		{
			name: "CRD re-scoping deployments.apps",
			files: map[string]string{
				"projects/team.yaml": strings.Replace(teamProject(""), "spec:\n",
					"spec:\n  clusterResourceWhitelist: [{group: apiextensions.k8s.io, kind: CustomResourceDefinition}]\n", 1),
				"apps/fake.yaml": guardApp("fake", "team", "fake", "team", ""),
				"fake/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: deployments.apps
  annotations: {tollgate.dev/exempt: "*"}
spec:
  group: apps
  scope: Cluster
  names: {kind: Deployment, plural: deployments, singular: deployment, listKind: DeploymentList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
				"fake/web.yaml": webDeployment("elsewhere", "nginx:1.27.3", `tollgate.dev/exempt: "*"`),
			},
			wantCode: exitDenied,
			wantLines: []string{
				`DENY  fake/crd.yaml:9  CustomResourceDefinition/deployments.apps  [project-resource-denied] CustomResourceDefinition "deployments.apps" re-declares apps/Deployment, a kind of the built-in API group "apps" that only Kubernetes serves; a CustomResourceDefinition in the manifests may only add kinds the cluster does not serve yet (app fake)`,
				`DENY  fake/web.yaml:5  Deployment/web  [project-destination-denied] Deployment "web" of Application "fake" has destination (server "https://kubernetes.default.svc", namespace "elsewhere"), which AppProject "team" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there (app fake)`,
			},
		},

		// The legitimate paths.
		{
			name: "AppProject exemption",
			files: map[string]string{
				"projects/team.yaml": teamProject("tollgate.dev/exempt: project-resource-denied"),
				"apps/rbac.yaml":     guardApp("rbac", "team", "rbac", "team", ""),
				"rbac/crb.yaml":      adminBinding(""),
			},
			wantCode: exitOK,
		},
		{
			name: "operator exemption",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/rbac.yaml":     guardApp("rbac", "team", "rbac", "team", ""),
				"rbac/crb.yaml":      adminBinding(""),
			},
			config:   operatorExemption,
			wantCode: exitOK,
		},
		{
			name: "operator exemption for another kind",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/rbac.yaml":     guardApp("rbac", "team", "rbac", "team", ""),
				"rbac/crb.yaml":      adminBinding(""),
				"rbac/role.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: team-all
rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]
`,
			},
			config:   operatorExemption,
			wantCode: exitDenied,
			wantLines: []string{
				`DENY  rbac/role.yaml:2  ClusterRole/team-all  [project-resource-denied] ClusterRole "team-all" of Application "rbac" is a cluster-scoped resource "rbac.authorization.k8s.io/ClusterRole" and AppProject "team" has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "rbac.authorization.k8s.io", kind: "ClusterRole"} (app rbac)`,
			},
		},
		{
			name: "hygiene exemption",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/web.yaml":      guardApp("web", "team", "web", "team", ""),
				"web/web.yaml":       webDeployment("", "nginx:latest", "tollgate.dev/exempt: no-latest-tag"),
			},
			wantCode: exitOK,
		},
		{
			name: "hygiene exemption with object exemptions off",
			files: map[string]string{
				"projects/team.yaml": teamProject(""),
				"apps/web.yaml":      guardApp("web", "team", "web", "team", ""),
				"web/web.yaml":       webDeployment("", "nginx:latest", "tollgate.dev/exempt: no-latest-tag"),
			},
			config:   objectExemptionsOff,
			wantCode: exitDenied,
			wantLines: []string{
				`DENY  web/web.yaml:5  Deployment/web  [exemption-not-allowed] Deployment "web" carries the exemption annotation tollgate.dev/exempt="no-latest-tag", but object exemptions are off (allowObjectExemptions: false); exemptions come from the operator's configuration (exemptions:) or the AppProject's tollgate.dev/exempt annotation (app web)`,
				`DENY  web/web.yaml:15  Deployment/web  [no-latest-tag] container "web" uses image "nginx:latest" with the mutable tag "latest"; pin a version tag or a digest (@sha256:...) (app web)`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			testutil.WriteFiles(t, repo, tt.files)
			outside := t.TempDir()
			args := []string{"test", "--repo-url", guardRepoURL, "--repo-root", repo}
			if tt.config != "" {
				testutil.WriteFiles(t, outside, map[string]string{"config.yaml": tt.config})
				args = append(args, "--config", filepath.Join(outside, "config.yaml"))
			}
			for i, p := range tt.projects {
				name := fmt.Sprintf("project-%d.yaml", i)
				testutil.WriteFiles(t, outside, map[string]string{name: p})
				args = append(args, "--project", filepath.Join(outside, name))
			}
			r := runCLI(t, nil, append(args, repo)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d (error %q)\nstdout:\n%s", r.code, tt.wantCode, r.err, r.stdout)
			}
			if diff := cmp.Diff(tt.wantLines, violationLines(r.stdout)); diff != "" {
				t.Errorf("report mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotes, lines(r.stderr)); diff != "" {
				t.Errorf("notes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGuardAllowNetwork: a user policy that could reach the network (or
// the cloud's metadata endpoint) compiles only with --allow-network.
func TestGuardAllowNetwork(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		// The call is guarded by a kind no test document has, so nothing
		// is sent.
		"policy/net.rego": `package main

deny contains msg if {
	input.kind == "NeverReviewed"
	resp := http.send({"method": "GET", "url": "http://169.254.169.254/"})
	msg := sprintf("metadata endpoint answered %d", [resp.status_code])
}
`,
		"repo/web.yaml": webDeployment("team", "nginx:1.27.3", ""),
	})
	policy := filepath.Join(dir, "policy")
	repo := filepath.Join(dir, "repo")

	r := runCLI(t, nil, "test", "--repo-root", repo, "--policy", policy, repo)
	if r.code != exitUsage {
		t.Fatalf("exit code = %d, want %d (error %q)\nstdout:\n%s", r.code, exitUsage, r.err, r.stdout)
	}
	want := "compile policies: 1 error occurred: POLICY/net.rego:5: rego_type_error: undefined function http.send (builtins that reach the network or the process are off; --allow-network turns them on)"
	if got := strings.ReplaceAll(r.err, policy, "POLICY"); got != want {
		t.Errorf("error = %q\nwant %q", got, want)
	}

	r = runCLI(t, nil, "test", "--repo-root", repo, "--allow-network", "--policy", policy, repo)
	if r.code != exitOK {
		t.Fatalf("with --allow-network: exit code = %d, want %d (error %q)\nstdout:\n%s", r.code, exitOK, r.err, r.stdout)
	}
}
