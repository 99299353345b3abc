package application

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestProjectScopedCluster follows Argo CD's
// TestAppProject_IsDestinationPermitted_PermitOnlyProjectScopedClusters,
// with the in-cluster destination and the message.
func TestProjectScopedCluster(t *testing.T) {
	scoped := func(name, server, project string) corev1.Secret {
		s := clusterSecret(name, server, "{}", "1")
		if project != "" {
			s.Data["project"] = []byte(project)
		}
		return s
	}
	secrets := []corev1.Secret{
		scoped("team-a-prod", "https://prod.example.com/", "team-a"),
		scoped("team-b-prod", "https://prod-b.example.com", "team-b"),
		scoped("shared", "https://shared.example.com", ""),
		// A repository Secret with the project key is no cluster.
		{
			ObjectMeta: metav1.ObjectMeta{Name: "repo", Labels: map[string]string{SecretTypeLabel: "repository"}},
			Data:       map[string][]byte{"name": []byte("repo"), "server": []byte("https://repo.example.com"), "project": []byte("team-a")},
		},
	}
	for name, tc := range map[string]struct {
		unrestricted bool
		dest         v1alpha1.ApplicationDestination
		server       string
		want         string
	}{
		"own cluster by server": {
			dest:   v1alpha1.ApplicationDestination{Server: "https://prod.example.com", Namespace: "web"},
			server: "https://prod.example.com",
		},
		"own cluster by name": {
			dest:   v1alpha1.ApplicationDestination{Name: "team-a-prod", Namespace: "web"},
			server: "https://prod.example.com",
		},
		"another project's cluster by server": {
			dest:   v1alpha1.ApplicationDestination{Server: "https://prod-b.example.com", Namespace: "web"},
			server: "https://prod-b.example.com",
			want:   "application destination server 'https://prod-b.example.com' and namespace 'web' do not match any of the allowed destinations in project 'team-a'",
		},
		"another project's cluster by name": {
			dest:   v1alpha1.ApplicationDestination{Name: "team-b-prod", Namespace: "web"},
			server: "https://prod-b.example.com",
			want:   "application destination server 'team-b-prod' and namespace 'web' do not match any of the allowed destinations in project 'team-a'",
		},
		"a repository Secret of the project is no cluster": {
			dest:   v1alpha1.ApplicationDestination{Server: "https://repo.example.com", Namespace: "web"},
			server: "https://repo.example.com",
			want:   "application destination server 'https://repo.example.com' and namespace 'web' do not match any of the allowed destinations in project 'team-a'",
		},
		"a cluster of no project": {
			dest:   v1alpha1.ApplicationDestination{Server: "https://shared.example.com", Namespace: "web"},
			server: "https://shared.example.com",
			want:   "application destination server 'https://shared.example.com' and namespace 'web' do not match any of the allowed destinations in project 'team-a'",
		},
		"in-cluster by server": {
			dest:   v1alpha1.ApplicationDestination{Server: InClusterServer, Namespace: "web"},
			server: InClusterServer,
			want:   "application destination server 'https://kubernetes.default.svc' and namespace 'web' do not match any of the allowed destinations in project 'team-a'",
		},
		"in-cluster by name": {
			dest:   v1alpha1.ApplicationDestination{Name: InClusterName, Namespace: "web"},
			server: InClusterServer,
			want:   "application destination server 'in-cluster' and namespace 'web' do not match any of the allowed destinations in project 'team-a'",
		},
		"not restricted": {
			unrestricted: true,
			dest:         v1alpha1.ApplicationDestination{Server: InClusterServer, Namespace: "web"},
			server:       InClusterServer,
		},
	} {
		t.Run(name, func(t *testing.T) {
			proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{PermitOnlyProjectScopedClusters: !tc.unrestricted}}
			proj.Name = "team-a"
			got := projectScopedCluster(proj, tc.dest, tc.server, secrets)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}

	// The project's own Secret for the in-cluster server scopes it.
	withLocal := append(secrets[:len(secrets):len(secrets)], scoped("local", InClusterServer, "team-a"))
	proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{PermitOnlyProjectScopedClusters: true}}
	proj.Name = "team-a"
	for _, dest := range []v1alpha1.ApplicationDestination{{Server: InClusterServer}, {Name: "local"}} {
		if got := projectScopedCluster(proj, dest, InClusterServer, withLocal); got != "" {
			t.Errorf("%+v with the project's in-cluster Secret: %q, want permitted", dest, got)
		}
	}
	if got := projectScopedCluster(nil, v1alpha1.ApplicationDestination{Server: InClusterServer}, InClusterServer, secrets); got != "" {
		t.Errorf("missing project: %q, want no message (the policies refuse it)", got)
	}
}
