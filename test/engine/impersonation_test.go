package engine_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// deployer creates the service account deployer in the fixture's
// namespace with rules (a Role and its RoleBinding), and returns its user
// name.
func deployer(t *testing.T, f *fixture, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	name := "deployer"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: f.ns}},
	}
	for _, o := range []client.Object{sa, role, binding} {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
	return fmt.Sprintf("system:serviceaccount:%s:%s", f.ns, name)
}

var (
	allOnConfigMaps = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}
	allOnWorkloads  = rbacv1.PolicyRule{APIGroups: []string{"", "apps"}, Resources: []string{"configmaps", "services", "deployments"}, Verbs: []string{"*"}}
)

// TestImpersonation runs syncs with argocd-cm's
// application.sync.impersonation.enabled: every write acts as the service
// account the project names for the destination, so the API server's RBAC
// bounds what the Application can do.
func TestImpersonation(t *testing.T) {
	t.Parallel()
	t.Run("a kind the service account may not write fails the wave before anything is written", func(t *testing.T) {
		t.Parallel()
		files := baseFiles()
		delete(files, "manifests/service.yaml")
		f := newFixture(t, files)
		f.cp = impersonationNS
		user := deployer(t, f, allOnConfigMaps)
		f.editProject = func(p *v1alpha1.AppProject) {
			p.Spec.DestinationServiceAccounts = []v1alpha1.ApplicationDestinationServiceAccount{
				{Server: "https://other.example.com", Namespace: "*", DefaultServiceAccount: "nobody"},
				{Server: "*", Namespace: f.ns, DefaultServiceAccount: "deployer"},
			}
		}
		f.application(automated(true, false), nil)
		app := f.waitApp("sync failed", func(a *v1alpha1.Application) bool {
			st := a.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationFailed
		})
		msg := app.Status.OperationState.Message
		// The wave reads the live Deployment as the service account
		// first: that is what the API server refuses.
		if want := fmt.Sprintf(`User %q cannot get resource "deployments" in API group "apps" in the namespace %q`, user, f.ns); !strings.Contains(msg, want) {
			t.Errorf("operation message %q does not say %q", msg, want)
		}
		consistently(t, "nothing of the wave written", 2*resync, func() (bool, string) {
			return allAbsent(t.Context(), baseRefs(f.ns, "settings", "web"))
		})
	})
	t.Run("rights that suffice", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, baseFiles())
		f.cp = impersonationNS
		deployer(t, f, allOnWorkloads)
		f.editProject = func(p *v1alpha1.AppProject) {
			p.Spec.DestinationServiceAccounts = []v1alpha1.ApplicationDestinationServiceAccount{
				{Server: "https://kubernetes.default.*", Namespace: "*", DefaultServiceAccount: f.ns + ":deployer"},
			}
		}
		f.application(automated(true, false), nil)
		f.waitSynced(f.head)
	})
	t.Run("no matching service account refuses the sync", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, baseFiles())
		f.cp = impersonationNS
		f.editProject = func(p *v1alpha1.AppProject) {
			p.Spec.DestinationServiceAccounts = []v1alpha1.ApplicationDestinationServiceAccount{
				{Server: inCluster, Namespace: "other-*", DefaultServiceAccount: "deployer"},
			}
		}
		f.application(automated(true, false), nil)
		app := f.waitApp("sync failed", func(a *v1alpha1.Application) bool {
			st := a.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationFailed
		})
		want := fmt.Sprintf("sync failed: sync: no matching service account found for destination server %s and namespace %s", inCluster, f.ns)
		if got := app.Status.OperationState.Message; got != want {
			t.Errorf("operation message %q, want %q", got, want)
		}
		consistently(t, "nothing written", 2*resync, func() (bool, string) {
			return allAbsent(t.Context(), baseRefs(f.ns, "settings", "web"))
		})
	})
}
