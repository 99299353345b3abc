package v1alpha1

import (
	"errors"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// SecretRef names a key of a Secret in the ApplicationSet's namespace.
type SecretRef struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
}

// ConfigMapKeyRef names a key of a ConfigMap in the ApplicationSet's
// namespace.
type ConfigMapKeyRef struct {
	ConfigMapName string `json:"configMapName"`
	Key           string `json:"key"`
}

// PullRequestGenerator produces one parameter set per open pull request of
// a repository on GitHub, GitLab or Gitea.
type PullRequestGenerator struct {
	// +optional
	Github *PullRequestGeneratorGithub `json:"github,omitempty"`
	// +optional
	GitLab *PullRequestGeneratorGitLab `json:"gitlab,omitempty"`
	// +optional
	Gitea *PullRequestGeneratorGitea `json:"gitea,omitempty"`
	// BitbucketServer, Bitbucket and AzureDevOps are Argo CD's other
	// providers, which tollgate refuses, naming them.
	// +optional
	BitbucketServer *apiextensionsv1.JSON `json:"bitbucketServer,omitempty"`
	// +optional
	Bitbucket *apiextensionsv1.JSON `json:"bitbucket,omitempty"`
	// +optional
	AzureDevOps *apiextensionsv1.JSON `json:"azuredevops,omitempty"`
	// Filters keep the pull requests one of them matches (all its
	// patterns).
	// +optional
	Filters []PullRequestGeneratorFilter `json:"filters,omitempty"`
	// RequeueAfterSeconds is how often the provider is asked again (30
	// minutes when unset).
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// ContinueOnRepoNotFoundError produces nothing, rather than an error,
	// when the repository does not exist.
	// +optional
	ContinueOnRepoNotFoundError bool `json:"continueOnRepoNotFoundError,omitempty"`
}

// PullRequestGeneratorGithub lists the pull requests of a GitHub
// repository.
type PullRequestGeneratorGithub struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// API is the GitHub Enterprise API URL; "" is https://api.github.com.
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// AppSecretName (GitHub App credentials) is refused.
	// +optional
	AppSecretName string `json:"appSecretName,omitempty"`
	// Labels keep the pull requests that carry all of them.
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// PullRequestGeneratorGitLab lists the merge requests of a GitLab project.
type PullRequestGeneratorGitLab struct {
	// Project is the project's ID or path (group/name).
	Project string `json:"project"`
	// API is the GitLab URL; "" is https://gitlab.com.
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
	// PullRequestState is GitLab's state filter (opened, closed, merged,
	// locked); "" lists them all, as GitLab does.
	// +optional
	PullRequestState string `json:"pullRequestState,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	CARef *ConfigMapKeyRef `json:"caRef,omitempty"`
}

// PullRequestGeneratorGitea lists the open pull requests of a Gitea
// repository.
type PullRequestGeneratorGitea struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	API   string `json:"api"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// PullRequestGeneratorFilter keeps the pull requests whose branch, target
// branch and title match its regular expressions (RE2).
type PullRequestGeneratorFilter struct {
	// +optional
	BranchMatch *string `json:"branchMatch,omitempty"`
	// +optional
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
	// +optional
	TitleMatch *string `json:"titleMatch,omitempty"`
}

// Provider is the provider the generator names ("github", "gitlab" or
// "gitea"), its API URL as given ("" for the provider's public API) and
// its token: exactly one provider must be set (Argo CD takes the first).
func (p *PullRequestGenerator) Provider() (name, api string, tokenRef *SecretRef, err error) {
	n := 0
	if g := p.Gitea; g != nil {
		name, api, tokenRef, n = "gitea", g.API, g.TokenRef, n+1
	}
	if g := p.GitLab; g != nil {
		name, api, tokenRef, n = "gitlab", g.API, g.TokenRef, n+1
	}
	if g := p.Github; g != nil {
		name, api, tokenRef, n = "github", g.API, g.TokenRef, n+1
	}
	switch n {
	case 0:
		return "", "", nil, errors.New("no provider is set (want one of github, gitlab, gitea)")
	case 1:
		return name, api, tokenRef, nil
	}
	return "", "", nil, errors.New("more than one provider is set (want one of github, gitlab, gitea)")
}
