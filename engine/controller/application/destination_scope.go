package application

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// projectScopedCluster says why proj, when it sets
// permitOnlyProjectScopedClusters, does not permit the cluster dest
// resolved to (server is its API server URL); "" when it does, or when
// the project does not restrict clusters (a missing project is the
// policies' to refuse).
//
// As Argo CD's AppProject.IsDestinationPermitted, the project's clusters
// are the cluster Secrets of the control-plane namespace (secrets) whose
// key "project" is the project's name, and the destination's cluster is
// one of them when one has its name or its server URL. The in-cluster
// destination without a cluster Secret belongs to no project: a project
// that permits only its own clusters cannot deploy there unless a cluster
// Secret of the project registers it. The message is Argo CD's, which
// names the cluster by name when the destination does.
func projectScopedCluster(proj *v1alpha1.AppProject, dest v1alpha1.ApplicationDestination, server string, secrets []corev1.Secret) string {
	if proj == nil || !proj.Spec.PermitOnlyProjectScopedClusters {
		return ""
	}
	name := dest.Name
	if name == "" {
		name = clusterNameOf(server, secrets)
	}
	for _, s := range secrets {
		if s.Labels[SecretTypeLabel] != SecretTypeCluster || string(s.Data["project"]) != proj.Name {
			continue
		}
		if (name != "" && string(s.Data["name"]) == name) || strings.TrimRight(string(s.Data["server"]), "/") == server {
			return ""
		}
	}
	shown := server
	if dest.Name != "" {
		shown = name
	}
	return fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
		shown, dest.Namespace, proj.Name)
}

// clusterNameOf is the name of the cluster at server: its cluster
// Secret's, or in-cluster for the in-cluster server without one.
func clusterNameOf(server string, secrets []corev1.Secret) string {
	for _, s := range secrets {
		if s.Labels[SecretTypeLabel] == SecretTypeCluster && strings.TrimRight(string(s.Data["server"]), "/") == server {
			return string(s.Data["name"])
		}
	}
	if server == InClusterServer {
		return InClusterName
	}
	return ""
}
