package policies

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func application(name, project string) map[string]any {
	spec := map[string]any{"destination": map[string]any{"namespace": "shop"}}
	if project != "" {
		spec["project"] = project
	}
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata":   map[string]any{"name": name, "namespace": "argocd"},
		"spec":       spec,
	}
}

func appProject(name, namespace string) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   meta,
		"spec":       map[string]any{"sourceRepos": []any{"https://git.example.com/" + name}},
	}
}

func crd(group, kind, scope string) map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "things." + group},
		"spec": map[string]any{
			"group": group,
			"names": map[string]any{"kind": kind, "plural": "things"},
			"scope": scope,
		},
	}
}

func hpa(namespace, apiVersion, kind, name string) map[string]any {
	meta := map[string]any{"name": "scale-" + name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	ref := map[string]any{"kind": kind, "name": name}
	if apiVersion != "" {
		ref["apiVersion"] = apiVersion
	}
	return map[string]any{
		"apiVersion": "autoscaling/v2",
		"kind":       "HorizontalPodAutoscaler",
		"metadata":   meta,
		"spec":       map[string]any{"scaleTargetRef": ref, "maxReplicas": int64(5)},
	}
}

func object(apiVersion, kind, namespace, name string) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
}

// summary is the part of an Input BuildInputs decides, in comparable form.
type summary struct {
	Application   string
	Project       string
	ClusterScoped bool
	ScaledByHPA   bool
	Point         EnforcementPoint
	Namespace     string
	Unplaced      bool
	Redeclared    string
}

func summarize(in Input) summary {
	s := summary{
		ClusterScoped: in.Context.ClusterScoped,
		ScaledByHPA:   in.Context.ScaledByHPA,
		Point:         in.Context.EnforcementPoint,
		Namespace:     in.Context.ArgoCDNamespace,
		Unplaced:      in.Context.KindUnplaced,
		Redeclared:    in.Context.RedeclaredKind,
	}
	if in.Application != nil {
		s.Application = objectName(in.Application)
	}
	if in.Project != nil {
		s.Project = objectName(in.Project)
		if spec, ok := nestedMap(in.Project, "spec"); ok && cmp.Equal(spec["sourceRepos"], []any{"*"}) {
			s.Project += " (allow-all)"
		}
	}
	return s
}

func TestBuildInputs(t *testing.T) {
	team := appProject("team", "")
	clusterTeam := appProject("team", "argocd")
	clusterDefault := appProject("default", "argocd")
	shopApp := application("shop", "team")

	tests := []struct {
		name      string
		namespace string
		items     []Item
		projects  []map[string]any
		// clusterOnly leaves AppProjects among the items out of the
		// project set (the engine and the webhook); noImplicit makes a
		// missing "default" project missing.
		clusterOnly, noImplicit bool
		scope                   KindScope
		want                    []summary
	}{
		{
			name:      "project from the items",
			namespace: "argocd",
			items:     []Item{{Object: shopApp}, {Object: team}},
			want: []summary{
				{Application: "shop", Project: "team", Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name:     "project from the cluster",
			items:    []Item{{Object: shopApp}},
			projects: []map[string]any{clusterTeam},
			want:     []summary{{Application: "shop", Project: "team", Point: PointCLI, Namespace: "argocd"}},
		},
		{
			name:  "missing project",
			items: []Item{{Object: application("shop", "nope")}},
			want:  []summary{{Application: "shop", Point: PointCLI, Namespace: "argocd"}},
		},
		{
			name:  "empty project means the implicit default",
			items: []Item{{Object: application("shop", "")}, {Object: application("blog", "default")}},
			want: []summary{
				{Application: "shop", Project: "default (allow-all)", Point: PointCLI, Namespace: "argocd"},
				{Application: "blog", Project: "default (allow-all)", Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name:     "explicit default project wins over the implicit one",
			items:    []Item{{Object: application("shop", "")}},
			projects: []map[string]any{clusterDefault},
			want:     []summary{{Application: "shop", Project: "default", Point: PointCLI, Namespace: "argocd"}},
		},
		{
			name:      "AppProject outside the Argo CD namespace is not a project",
			namespace: "gitops",
			items:     []Item{{Object: shopApp}, {Object: appProject("team", "elsewhere")}},
			want: []summary{
				{Application: "shop", Point: PointCLI, Namespace: "gitops"},
				{Point: PointCLI, Namespace: "gitops"},
			},
		},
		{
			name:  "rendered object inherits its Application and project",
			items: []Item{{Object: deployment("web", "nginx:1", nil), Application: shopApp}, {Object: team}},
			want: []summary{
				{Application: "shop", Project: "team", Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name: "child Application rendered by a parent is judged against the parent's project",
			items: []Item{
				{Object: application("apps", "team")},
				{Object: application("child", "other"), Application: application("apps", "team")},
				{Object: team},
				{Object: appProject("other", "")},
			},
			want: []summary{
				{Application: "apps", Project: "team", Point: PointCLI, Namespace: "argocd"},
				{Application: "apps", Project: "team", Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name: "Application given as its own Application is reviewed on its own",
			items: []Item{
				{Object: shopApp, Application: shopApp},
				{Object: application("blog", "other"), Application: application("blog", "other")},
				{Object: team},
				{Object: appProject("other", "")},
			},
			want: []summary{
				{Application: "shop", Project: "team", Point: PointCLI, Namespace: "argocd"},
				{Application: "blog", Project: "other", Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name: "cluster scope from the built-in table and CRDs",
			items: []Item{
				{Object: object("v1", "Namespace", "", "shop")},
				{Object: object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader")},
				{Object: object("v1", "ConfigMap", "shop", "cm")},
				{Object: crd("example.com", "Widget", "Cluster")},
				{Object: object("example.com/v1", "Widget", "", "w")},
				{Object: crd("example.com", "Gadget", "Namespaced")},
				{Object: object("example.com/v1", "Gadget", "shop", "g")},
				{Object: object("other.example.com/v1", "Widget", "", "w")},
			},
			want: []summary{
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd", Unplaced: true},
			},
		},
		{
			name: "a CRD never re-scopes a built-in kind",
			items: []Item{
				{Object: crd("apps", "Deployment", "Cluster")},
				{Object: object("apps/v1", "Deployment", "kube-system", "web")},
				{Object: crd("rbac.authorization.k8s.io", "ClusterRoleBinding", "Namespaced")},
				{Object: object("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "admin")},
			},
			want: []summary{
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd", Redeclared: `apps/Deployment, a kind of the built-in API group "apps" that only Kubernetes serves`},
				{Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd", Redeclared: `rbac.authorization.k8s.io/ClusterRoleBinding, a kind of the built-in API group "rbac.authorization.k8s.io" that only Kubernetes serves`},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name:  "scope from the destination first, CRDs only for kinds it does not serve",
			scope: fakeScope{{"kyverno.io", "ClusterPolicy"}: true, {"example.com", "Widget"}: false},
			items: []Item{
				{Object: object("kyverno.io/v1", "ClusterPolicy", "", "p")},
				{Object: crd("example.com", "Widget", "Cluster")},
				{Object: object("example.com/v1", "Widget", "", "w")},
				{Object: crd("example.com", "Gadget", "Cluster")},
				{Object: object("example.com/v1", "Gadget", "", "g")},
				{Object: object("example.com/v1", "Unknown", "", "u")},
			},
			want: []summary{
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd", Redeclared: "example.com/Widget, which the destination serves as Namespaced"},
				{Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{ClusterScoped: true, Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd", Unplaced: true},
			},
		},
		{
			name:        "an AppProject among the items is no project for the cluster's doors",
			clusterOnly: true,
			items:       []Item{{Object: shopApp}, {Object: team, Application: shopApp}},
			want: []summary{
				{Application: "shop", Point: PointCLI, Namespace: "argocd"},
				{Application: "shop", Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name:       "a missing default project is missing without the implicit default",
			noImplicit: true,
			items:      []Item{{Object: application("shop", "")}},
			want:       []summary{{Application: "shop", Point: PointCLI, Namespace: "argocd"}},
		},
		{
			name: "HPA marks its target in its namespace",
			items: []Item{
				{Object: hpa("shop", "apps/v1", "Deployment", "web")},
				{Object: object("apps/v1", "Deployment", "shop", "web")},
				{Object: object("apps/v1", "Deployment", "blog", "web")},
				{Object: object("apps/v1", "StatefulSet", "shop", "web")},
				{Object: object("apps/v1", "Deployment", "shop", "api")},
				{Object: object("example.com/v1", "Deployment", "shop", "web")},
			},
			want: []summary{
				{Point: PointCLI, Namespace: "argocd"},
				{ScaledByHPA: true, Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd", Unplaced: true},
			},
		},
		{
			name: "HPA without namespace matches through the Application destination",
			items: []Item{
				{Object: hpa("", "", "Deployment", "web"), Application: shopApp},
				{Object: object("apps/v1", "Deployment", "", "web"), Application: shopApp},
				{Object: object("apps/v1", "Deployment", "shop", "web")},
				{Object: object("apps/v1", "Deployment", "", "web")},
			},
			want: []summary{
				{Application: "shop", Point: PointCLI, Namespace: "argocd"},
				{Application: "shop", ScaledByHPA: true, Point: PointCLI, Namespace: "argocd"},
				{ScaledByHPA: true, Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
			},
		},
		{
			name:  "malformed objects do not panic",
			items: []Item{{Object: nil}, {Object: map[string]any{"kind": 3, "metadata": "x"}}, {Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "spec": "x"}}},
			want: []summary{
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd"},
				{Point: PointCLI, Namespace: "argocd", Project: "default (allow-all)"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins := BuildInputs(InputOptions{
				Point: PointCLI, ArgoCDNamespace: tt.namespace, Projects: tt.projects, Scope: tt.scope,
				ProjectsFromItems: !tt.clusterOnly, ImplicitDefaultProject: !tt.noImplicit,
			}, tt.items)
			got := make([]summary, len(ins))
			for i, in := range ins {
				got[i] = summarize(in)
				if !sameMap(in.Object, tt.items[i].Object) {
					t.Errorf("input %d: Object is not the item's object", i)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("BuildInputs() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeScope is a destination's discovery: the kinds it serves.
type fakeScope map[groupKind]bool

func (f fakeScope) Scope(group, kind string) (clusterScoped, known bool) {
	c, ok := f[groupKind{group, kind}]
	return c, ok
}

// TestBuildInputsPinnedProjectWins: an AppProject among the items (a pull
// request's) never replaces one of the same name the caller passed (CI's
// --project file of the platform's real project).
func TestBuildInputsPinnedProjectWins(t *testing.T) {
	pinned := appProject("team", "argocd")
	changed := appProject("team", "argocd")
	changed["metadata"].(map[string]any)["annotations"] = map[string]any{ExemptAnnotation: "*"}
	app := application("shop", "team")
	ins := BuildInputs(InputOptions{Point: PointCLI, Projects: []map[string]any{pinned}, ProjectsFromItems: true},
		[]Item{{Object: app}, {Object: changed}})
	if !sameMap(ins[0].Project, pinned) {
		t.Errorf("project is %v, want the pinned one", ins[0].Project)
	}
}

// TestBuildInputsKeepsClusterProject: a rendered AppProject named like the
// Application's own project never replaces the cluster's.
func TestBuildInputsKeepsClusterProject(t *testing.T) {
	cluster := appProject("team", "argocd")
	rendered := appProject("team", "argocd")
	rendered["metadata"].(map[string]any)["annotations"] = map[string]any{ExemptAnnotation: "*"}
	app := application("shop", "team")
	ins := BuildInputs(InputOptions{Point: PointSync, Projects: []map[string]any{cluster}},
		[]Item{{Object: app}, {Object: rendered, Application: app}})
	for i, in := range ins {
		if !sameMap(in.Project, cluster) {
			t.Errorf("input %d: project is %v, want the cluster's", i, in.Project)
		}
	}
}

// TestBuildInputsParentView: the objects an Application renders see it
// without status and volatile metadata, one view for all of
// them; the Application's own review sees it whole, and the caller's map is
// not modified.
func TestBuildInputsParentView(t *testing.T) {
	app := application("shop", "team")
	app["status"] = map[string]any{"sync": map[string]any{"status": "Synced"}}
	app["operation"] = map[string]any{"sync": map[string]any{}}
	md := app["metadata"].(map[string]any)
	md["resourceVersion"], md["generation"], md["labels"] = "42", int64(3), map[string]any{"team": "a"}
	ins := BuildInputs(InputOptions{Point: PointSync}, []Item{
		{Object: app}, {Object: object("v1", "ConfigMap", "a", "shop"), Application: app}, {Object: object("v1", "ConfigMap", "b", "shop"), Application: app},
	})
	if !sameMap(ins[0].Application, app) {
		t.Errorf("the Application's own input has %v, want the Application whole", ins[0].Application)
	}
	want := application("shop", "team")
	want["operation"] = map[string]any{"sync": map[string]any{}}
	want["metadata"].(map[string]any)["labels"] = map[string]any{"team": "a"}
	if diff := cmp.Diff(want, ins[1].Application); diff != "" {
		t.Errorf("a rendered object's Application (-want +got):\n%s", diff)
	}
	if !sameMap(ins[1].Application, ins[2].Application) {
		t.Error("the rendered objects have two views of one Application, want one")
	}
	if _, ok := app["status"]; !ok || md["resourceVersion"] != "42" {
		t.Errorf("the caller's Application was modified: %v", app)
	}
	if stripped := WithoutRuntimeState(app); !sameMap(WithoutRuntimeState(stripped), stripped) {
		t.Error("an Application without runtime state was copied again")
	}
}

func TestBuildInputsSetsPoint(t *testing.T) {
	ins := BuildInputs(InputOptions{Point: PointSync, ArgoCDNamespace: "gitops"}, []Item{{Object: object("v1", "ConfigMap", "a", "b")}})
	want := Context{EnforcementPoint: PointSync, ArgoCDNamespace: "gitops"}
	if diff := cmp.Diff(want, ins[0].Context); diff != "" {
		t.Errorf("Context mismatch (-want +got):\n%s", diff)
	}
}

func TestDefaultProject(t *testing.T) {
	p := DefaultProject()
	want := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "default"},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("DefaultProject() mismatch (-want +got):\n%s", diff)
	}
	p["metadata"].(map[string]any)["name"] = "changed"
	if objectName(DefaultProject()) != "default" {
		t.Error("DefaultProject() returned shared state")
	}
}

func TestScopes(t *testing.T) {
	s := NewScopes(
		crd("example.com", "Widget", "Cluster"),
		crd("example.com", "Gadget", "Namespaced"),
		crd("", "Pod", "Cluster"),
		crd("example.com", "", "Cluster"),
		crd("apps", "Namespace", "Namespaced"),
		object("v1", "ConfigMap", "a", "not-a-crd"),
		nil,
	)
	tests := []struct {
		group, kind string
		want        bool
	}{
		{"", "Namespace", true},
		{"", "Node", true},
		{"", "PersistentVolume", true},
		{"", "Pod", false},
		{"", "ConfigMap", false},
		{"apps", "Deployment", false},
		{"rbac.authorization.k8s.io", "ClusterRoleBinding", true},
		{"rbac.authorization.k8s.io", "RoleBinding", false},
		{"apiextensions.k8s.io", "CustomResourceDefinition", true},
		{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", true},
		{"admissionregistration.k8s.io", "MutatingAdmissionPolicy", true},
		{"apiregistration.k8s.io", "APIService", true},
		{"storage.k8s.io", "CSIStorageCapacity", false},
		{"storage.k8s.io", "StorageClass", true},
		{"resource.k8s.io", "DeviceClass", true},
		{"resource.k8s.io", "ResourceClaim", false},
		{"networking.k8s.io", "IngressClass", true},
		{"networking.k8s.io", "Ingress", false},
		{"example.com", "Widget", true},
		{"example.com", "Gadget", false},
		{"other.example.com", "Widget", false},
		{"apps", "Namespace", false},
		{"", "Namespace", true},
	}
	for _, tt := range tests {
		t.Run(tt.group+"/"+tt.kind, func(t *testing.T) {
			if got := s.ClusterScoped(tt.group, tt.kind); got != tt.want {
				t.Errorf("ClusterScoped(%q, %q) = %v, want %v", tt.group, tt.kind, got, tt.want)
			}
			if tt.group != "example.com" {
				if got := IsClusterScoped(tt.group, tt.kind); got != tt.want {
					t.Errorf("IsClusterScoped(%q, %q) = %v, want %v", tt.group, tt.kind, got, tt.want)
				}
			}
		})
	}
	var zero Scopes
	if !zero.ClusterScoped("", "Namespace") || zero.ClusterScoped("example.com", "Widget") {
		t.Error("zero Scopes should know the built-in table only")
	}
}

func TestGroupOf(t *testing.T) {
	tests := map[string]string{
		"v1":                           "",
		"apps/v1":                      "apps",
		"argoproj.io/v1alpha1":         "argoproj.io",
		"":                             "",
		"rbac.authorization.k8s.io/v1": "rbac.authorization.k8s.io",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := GroupOf(in); got != want {
				t.Errorf("GroupOf(%q) = %q, want %q", in, got, want)
			}
		})
	}
}
