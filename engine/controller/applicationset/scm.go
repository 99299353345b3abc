package applicationset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// DefaultSCMRequeue is how often a pull request or SCM provider generator
// asks its provider again without requeueAfterSeconds, as in Argo CD.
const DefaultSCMRequeue = 30 * time.Minute

// scmAccess reads what set's pull request and SCM provider generators may
// send to their providers: nil without one. Each tokenRef names a Secret of set's
// namespace, which must be labelled argocd.argoproj.io/secret-type:
// scm-creds (Argo CD's strict token mode) and, when its data has a
// project, serve that project alone; each caRef a ConfigMap there. A
// tokenRef rendered from parameters is not read (the repo-server then
// refuses the generator). The first error names the generator's field.
func (r *Reconciler) scmAccess(ctx context.Context, set *v1alpha1.ApplicationSet) (*reposerver.SCMAccess, error) {
	var access *reposerver.SCMAccess
	var err error
	set.WalkGenerators(func(field, kind string, raw map[string]any) {
		if (kind != "pullRequest" && kind != "scmProvider") || err != nil {
			return
		}
		if r.opts.SCMProvidersDisabled {
			err = fmt.Errorf("%s: scm providers are disabled (--enable-scm-providers=false)", field)
			return
		}
		if access == nil {
			access = &reposerver.SCMAccess{Allowed: r.opts.AllowedSCMProviders}
		}
		p, perr := scmProvider(kind, raw)
		if perr != nil {
			return // the repo-server refuses it, naming the provider
		}
		field += "." + p.Name
		if ref := p.TokenRef; ref != nil && !strings.Contains(ref.SecretName+ref.Key, "{{") {
			var tok reposerver.SCMToken
			if tok, err = r.scmToken(ctx, set, ref); err != nil {
				err = fmt.Errorf("%s.tokenRef: error fetching Secret token: %w", field, err)
				return
			}
			access.Tokens = append(access.Tokens, tok)
		}
		if p.CARef != nil {
			var ca reposerver.SCMCA
			if ca, err = r.scmCA(ctx, set.Namespace, p.CARef); err != nil {
				err = fmt.Errorf("%s.caRef: error fetching CA certificates from ConfigMap: %w", field, err)
				return
			}
			access.CAs = append(access.CAs, ca)
		}
	})
	return access, err
}

// scmProvider is the provider of the pull request or SCM provider
// generator raw.
func scmProvider(kind string, raw map[string]any) (v1alpha1.SCMProviderRef, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return v1alpha1.SCMProviderRef{}, err
	}
	if kind == "pullRequest" {
		var gen v1alpha1.PullRequestGenerator
		if err := json.Unmarshal(b, &gen); err != nil {
			return v1alpha1.SCMProviderRef{}, err
		}
		return gen.Provider()
	}
	var gen v1alpha1.SCMProviderGenerator
	if err := json.Unmarshal(b, &gen); err != nil {
		return v1alpha1.SCMProviderRef{}, err
	}
	return gen.Provider()
}

// scmToken reads the token ref names in set's namespace, with Argo CD's
// errors.
func (r *Reconciler) scmToken(ctx context.Context, set *v1alpha1.ApplicationSet, ref *v1alpha1.SecretRef) (reposerver.SCMToken, error) {
	var s corev1.Secret
	if err := r.deps.APIReader.Get(ctx, types.NamespacedName{Namespace: set.Namespace, Name: ref.SecretName}, &s); err != nil {
		return reposerver.SCMToken{}, fmt.Errorf("error fetching secret %s/%s: %w", set.Namespace, ref.SecretName, err)
	}
	if s.Labels[reposerver.SecretTypeLabel] != reposerver.SecretTypeSCMCreds {
		return reposerver.SCMToken{}, fmt.Errorf("secret %s/%s is not a valid SCM creds secret: secret must have label %q=%q",
			set.Namespace, ref.SecretName, reposerver.SecretTypeLabel, reposerver.SecretTypeSCMCreds)
	}
	if scoped := reposerver.SecretValue(&s, "project"); scoped != "" {
		if project, templated := set.TemplateProject(); templated || project != scoped {
			return reposerver.SCMToken{}, fmt.Errorf("secret %s/%s serves AppProject %q only, and this ApplicationSet's template names %s",
				set.Namespace, ref.SecretName, scoped, describeProject(project, templated))
		}
	}
	token, ok := s.Data[ref.Key]
	if !ok {
		return reposerver.SCMToken{}, fmt.Errorf("key %q in secret %s/%s not found", ref.Key, set.Namespace, ref.SecretName)
	}
	return reposerver.SCMToken{SecretName: ref.SecretName, Key: ref.Key, Token: string(token), URL: reposerver.SecretValue(&s, "url")}, nil
}

// describeProject names a template's project for messages.
func describeProject(project string, templated bool) string {
	if templated {
		return "a project that depends on parameters"
	}
	return fmt.Sprintf("project %q", project)
}

// scmCA reads the PEM certificates ref names in namespace ns.
func (r *Reconciler) scmCA(ctx context.Context, ns string, ref *v1alpha1.ConfigMapKeyRef) (reposerver.SCMCA, error) {
	var cm corev1.ConfigMap
	if err := r.deps.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.ConfigMapName}, &cm); err != nil {
		return reposerver.SCMCA{}, err
	}
	data, ok := cm.Data[ref.Key]
	if !ok {
		return reposerver.SCMCA{}, fmt.Errorf("key %s not found in ConfigMap %s", ref.Key, ref.ConfigMapName)
	}
	return reposerver.SCMCA{ConfigMapName: ref.ConfigMapName, Key: ref.Key, PEM: []byte(data)}, nil
}
