package webhook_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/webhook"
)

// The guard tests are issue #10's table of bypass attempts at the
// admission door, through the real API server: an exemption annotation on
// a tracked object or an Application never takes the team out of its
// AppProject, and no Application or AppProject reaches a protected
// namespace. The legitimate exemptions still work: the AppProject's
// annotation, the operator's exemptions: (operatorExemption, configured in
// setup) and an object's own annotation naming a hygiene rule.

// operatorExemption is the exemption in the configuration of the webhook
// under test: Deployments of Applications named "*-operator-exempt" may land
// outside their AppProject's destinations.
var operatorExemption = policies.Exemption{
	Rules:       []string{"project-destination-denied"},
	Application: "*-operator-exempt",
	Kind:        "Deployment",
	Reason:      "guard tests: the operator's exemption",
}

// wantDenials checks that err is the API server relaying a denial by hook
// with exactly these "[rule] message" lines.
func wantDenials(t *testing.T, err error, hook string, lines ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("request admitted, want it denied by %s with:\n%s", hook, strings.Join(lines, "\n"))
	}
	want := fmt.Sprintf("admission webhook %q denied the request: %s", hook, strings.Join(lines, "\n"))
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("error = %v\nwant a Forbidden error %q", err, want)
	}
}

// guardTeam is a project permitting the namespace inside and an
// Application of it deploying there, both cached by the webhook.
type guardTeam struct {
	inside, outside string
	project, app    string
}

// newGuardTeam creates two namespaces for t, an AppProject (with the
// annotations) permitting the first and an Application named
// unique(t, inside, appSuffix) of that project deploying there.
func newGuardTeam(t *testing.T, appSuffix string, projectAnnotations map[string]string) guardTeam {
	t.Helper()
	ctx := t.Context()
	g := guardTeam{inside: env.Namespace(t), outside: env.Namespace(t)}
	g.project = unique(t, g.inside, "team")
	g.app = unique(t, g.inside, appSuffix)
	u := newUser(t, "")
	proj := appProject(g.project, g.inside)
	proj.SetAnnotations(projectAnnotations)
	wantAllowed(t, u.Create(ctx, proj))
	waitCached(t, proj) // the Application is judged against it
	app := application(g.app, g.project, g.inside)
	wantAllowed(t, u.Create(ctx, app))
	waitCached(t, app)
	return g
}

// outsideDeployment is a Deployment the team's Application tracks, outside
// the namespaces its project permits.
func outsideDeployment(g guardTeam) client.Object {
	d := deployment(g.outside, "web", "nginx:1.27.3")
	d.Annotations = trackedBy(g.app, "apps/Deployment", g.outside, "web", "")
	return d
}

// trackedBy returns the annotations of an object the Application app
// tracks, with the exemption annotation when exempt is not "".
func trackedBy(app, groupKind, ns, name, exempt string) map[string]string {
	a := map[string]string{webhook.TrackingIDAnnotation: fmt.Sprintf("%s:%s:%s/%s", app, groupKind, ns, name)}
	if exempt != "" {
		a[policies.ExemptAnnotation] = exempt
	}
	return a
}

// destinationDenied is the denial of a namespaced object of g's Application
// in g.outside.
func (g guardTeam) destinationDenied(kind, name string) string {
	return fmt.Sprintf(`[project-destination-denied] %s %q of Application %q has destination (server "https://kubernetes.default.svc", namespace %q), which AppProject %q does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`,
		kind, name, g.app, g.outside, g.project)
}

// boundaryExemptionRefused is the denial of an object naming the boundary
// rule in its exemption annotation.
func boundaryExemptionRefused(kind, name, rule string) string {
	return fmt.Sprintf(`[exemption-not-allowed] %s %q names the boundary rule(s) %q in its tollgate.dev/exempt annotation, which exempts nothing from them; only the operator's configuration (exemptions:) or the AppProject's tollgate.dev/exempt annotation can exempt from a boundary rule`,
		kind, name, rule)
}

// TestGuardTrackedObjects: an object Argo CD tracks for an Application is
// judged with that Application's AppProject whatever its own annotations
// say; only the AppProject and the operator exempt it.
func TestGuardTrackedObjects(t *testing.T) {
	tests := []struct {
		name string
		// appSuffix names the Application (see operatorExemption).
		appSuffix string
		// projectExempt is the AppProject's exemption annotation.
		projectExempt string
		// obj is the object the admin creates, or the sync engine when
		// bySync.
		obj    func(g guardTeam) client.Object
		bySync bool
		// hook and want are the denying webhook and its lines; want is
		// nil when the object is admitted.
		hook string
		want func(g guardTeam) []string
	}{
		{
			name: "deployment exempt from every rule",
			obj: func(g guardTeam) client.Object {
				d := deployment(g.outside, "web", "nginx:1.27.3")
				d.Annotations = trackedBy(g.app, "apps/Deployment", g.outside, "web", "*")
				return d
			},
			hook: resourcesHook,
			want: func(g guardTeam) []string { return []string{g.destinationDenied("Deployment", "web")} },
		},
		{
			name: "deployment exempt from the boundary rule",
			obj: func(g guardTeam) client.Object {
				d := deployment(g.outside, "web", "nginx:1.27.3")
				d.Annotations = trackedBy(g.app, "apps/Deployment", g.outside, "web", "project-destination-denied")
				return d
			},
			hook: resourcesHook,
			want: func(g guardTeam) []string {
				return []string{
					boundaryExemptionRefused("Deployment", "web", "project-destination-denied"),
					g.destinationDenied("Deployment", "web"),
				}
			},
		},
		{
			name: "cluster role binding exempt from every rule",
			obj: func(g guardTeam) client.Object {
				name := g.app + "-admin"
				return &rbacv1.ClusterRoleBinding{
					ObjectMeta: metav1.ObjectMeta{
						Name:        name,
						Annotations: trackedBy(g.app, "rbac.authorization.k8s.io/ClusterRoleBinding", "", name, "*"),
					},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: g.inside, Name: "default"}},
				}
			},
			hook: trackedHook,
			want: func(g guardTeam) []string {
				return []string{fmt.Sprintf(`[project-resource-denied] ClusterRoleBinding %q of Application %q is a cluster-scoped resource "rbac.authorization.k8s.io/ClusterRoleBinding" and AppProject %q has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding"}`,
					g.app+"-admin", g.app, g.project)}
			},
		},
		{
			name:          "AppProject exemption",
			projectExempt: "project-destination-denied",
			bySync:        true,
			obj:           outsideDeployment,
		},
		{
			// Tracking metadata is written by whoever writes the object:
			// claimed by someone who does not sync, it lends no exemption.
			name:          "AppProject exemption borrowed by a tracking claim",
			projectExempt: "project-destination-denied",
			obj:           outsideDeployment,
			hook:          resourcesHook,
			want:          func(g guardTeam) []string { return []string{g.destinationDenied("Deployment", "web")} },
		},
		{
			name:      "operator exemption",
			appSuffix: "operator-exempt",
			bySync:    true,
			obj:       outsideDeployment,
		},
		{
			name:      "operator exemption borrowed by a tracking claim",
			appSuffix: "operator-exempt",
			obj:       outsideDeployment,
			hook:      resourcesHook,
			want:      func(g guardTeam) []string { return []string{g.destinationDenied("Deployment", "web")} },
		},
		{
			name:      "operator exemption for another kind",
			appSuffix: "operator-exempt",
			obj: func(g guardTeam) client.Object {
				return &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{
						Namespace: g.outside, Name: "settings",
						Annotations: trackedBy(g.app, "/ConfigMap", g.outside, "settings", ""),
					},
					Data: map[string]string{"mode": "fast"},
				}
			},
			hook: trackedHook,
			want: func(g guardTeam) []string { return []string{g.destinationDenied("ConfigMap", "settings")} },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var projectAnnotations map[string]string
			if tt.projectExempt != "" {
				projectAnnotations = map[string]string{policies.ExemptAnnotation: tt.projectExempt}
			}
			g := newGuardTeam(t, cmp.Or(tt.appSuffix, "web"), projectAnnotations)
			obj := tt.obj(g)
			u := newUser(t, "")
			if tt.bySync {
				u = newUser(t, syncSA)
			}
			err := u.Create(t.Context(), obj)
			if obj.GetNamespace() == "" && err == nil {
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
			}
			if tt.want == nil {
				wantAllowed(t, err)
				return
			}
			wantDenials(t, err, tt.hook, tt.want(g)...)
		})
	}
}

// TestGuardApplications: an Application's own exemption annotation does not
// widen its AppProject, and no Application deploys into a protected
// namespace.
func TestGuardApplications(t *testing.T) {
	ctx := t.Context()
	g := newGuardTeam(t, "web", nil)
	u := newUser(t, "")

	away := application(unique(t, g.inside, "away"), g.project, g.outside)
	away.SetAnnotations(map[string]string{policies.ExemptAnnotation: "*"})
	wantDenials(t, u.Create(ctx, away), argoprojHook,
		fmt.Sprintf(`[project-destination-denied] Application %q has destination (server "https://kubernetes.default.svc", namespace %q), which AppProject %q does not permit; deploy to a destination listed in the project's spec.destinations or add this one there`,
			away.GetName(), g.outside, g.project))

	away.SetAnnotations(map[string]string{policies.ExemptAnnotation: "project-destination-denied"})
	wantDenials(t, u.Create(ctx, away), argoprojHook,
		boundaryExemptionRefused("Application", away.GetName(), "project-destination-denied"),
		fmt.Sprintf(`[project-destination-denied] Application %q has destination (server "https://kubernetes.default.svc", namespace %q), which AppProject %q does not permit; deploy to a destination listed in the project's spec.destinations or add this one there`,
			away.GetName(), g.outside, g.project))

	for _, ns := range []string{"kube-system", "tollgate-system"} {
		into := application(unique(t, g.inside, "into-"+ns), g.project, ns)
		into.SetAnnotations(map[string]string{policies.ExemptAnnotation: "*"})
		wantDenials(t, u.Create(ctx, into), argoprojHook,
			fmt.Sprintf(`[project-destination-denied] Application %q has destination (server "https://kubernetes.default.svc", namespace %q), which AppProject %q does not permit; deploy to a destination listed in the project's spec.destinations or add this one there`,
				into.GetName(), ns, g.project),
			fmt.Sprintf(`[protected-namespace] Application %q deploys into the protected namespace %q; set spec.destination.namespace to a namespace of the team`,
				into.GetName(), ns))
	}
}

// TestGuardOperationFence: only tollgate's controller writes its operation
// fence on an Application. A tenant who sets it to a live replica's name
// would keep every other replica away from the Application; one who removes
// it while a sync runs would let a second replica start the same
// operation. An edit that keeps the fence is judged as usual.
func TestGuardOperationFence(t *testing.T) {
	ctx := t.Context()
	g := newGuardTeam(t, "web", nil)
	tenant, controller := newUser(t, ""), newUser(t, syncSA)
	key := policies.AnnotationOperationReplica
	refused := fmt.Sprintf(`[reserved-annotation] the annotation %q of Application %q is reserved for tollgate's controller, which writes it while a sync runs to keep the other controller replicas away; a manifest or a user may not set, change or remove it`,
		key, g.app)
	write := func(u user, edit func(*unstructured.Unstructured)) error {
		t.Helper()
		app := newApplication()
		if err := u.Get(ctx, client.ObjectKey{Namespace: argocdNS, Name: g.app}, app); err != nil {
			t.Fatal(err)
		}
		edit(app)
		return u.Update(ctx, app)
	}
	fence := func(replica string) func(*unstructured.Unstructured) {
		return func(app *unstructured.Unstructured) {
			a := app.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			if replica == "" {
				delete(a, key)
			} else {
				a[key] = replica
			}
			app.SetAnnotations(a)
		}
	}
	wantDenials(t, write(tenant, fence("tollgate-controller-0")), argoprojHook, refused)
	wantAllowed(t, write(controller, fence("tollgate-controller-0")))
	wantDenials(t, write(tenant, fence("tollgate-controller-1")), argoprojHook, refused)
	wantDenials(t, write(tenant, fence("")), argoprojHook, refused)
	wantAllowed(t, write(tenant, func(app *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(app.Object, "v2", "spec", "source", "targetRevision")
	}))
	wantAllowed(t, write(controller, fence("")))

	fenced := application(unique(t, g.inside, "fenced"), g.project, g.inside)
	fenced.SetAnnotations(map[string]string{key: "tollgate-controller-0"})
	wantDenials(t, tenant.Create(ctx, fenced), argoprojHook, strings.ReplaceAll(refused, g.app, fenced.GetName()))
}

// TestGuardWideAppProject: the pattern the README once showed, every
// namespace of every server, is refused at the door: it would let the
// team into tollgate's namespace, the control plane's and Argo CD's.
func TestGuardWideAppProject(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")

	wide := appProject(unique(t, ns, "wide"))
	if err := unstructured.SetNestedSlice(wide.Object, []any{
		map[string]any{"server": "*", "namespace": "*"},
	}, "spec", "destinations"); err != nil {
		t.Fatal(err)
	}
	wantDenials(t, u.Create(ctx, wide), argoprojHook,
		fmt.Sprintf(`[no-argocd-destination] AppProject %q permits the Argo CD namespace "argocd" through spec.destinations[0] (namespace "*"); add {server: "*", namespace: "!argocd"} to spec.destinations or narrow the namespace pattern`,
			wide.GetName()),
		fmt.Sprintf(`[protected-namespace] AppProject %q permits the protected namespace(s) "tollgate-system", "kube-system", "kube-public", "kube-node-lease" through spec.destinations[0] (namespace "*"); add a "!" entry such as {server: "*", namespace: "!tollgate-system"} for each to spec.destinations or narrow the namespace pattern`,
			wide.GetName()))

	// Excluding Argo CD's namespace alone leaves the protected ones.
	if err := unstructured.SetNestedSlice(wide.Object, []any{
		map[string]any{"server": "*", "namespace": "*"},
		map[string]any{"server": "*", "namespace": "!" + argocdNS},
	}, "spec", "destinations"); err != nil {
		t.Fatal(err)
	}
	wantDenials(t, u.Create(ctx, wide), argoprojHook,
		fmt.Sprintf(`[protected-namespace] AppProject %q permits the protected namespace(s) "tollgate-system", "kube-system", "kube-public", "kube-node-lease" through spec.destinations[0] (namespace "*"); add a "!" entry such as {server: "*", namespace: "!tollgate-system"} for each to spec.destinations or narrow the namespace pattern`,
			wide.GetName()))
}

// TestGuardHygieneExemption: an object still exempts itself from a hygiene
// rule.
func TestGuardHygieneExemption(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")

	d := deployment(ns, "web", "nginx:latest")
	d.Annotations = map[string]string{policies.ExemptAnnotation: "no-latest-tag"}
	wantAllowed(t, u.Create(ctx, d))
	if got := u.warnings.take(); len(got) != 0 {
		t.Errorf("warnings = %q, want none", got)
	}
}
