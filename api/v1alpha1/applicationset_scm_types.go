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

// SCMProviderRef is what an SCM generator (pull request or SCM provider)
// says of its provider: "github", "gitlab" or "gitea", the API URL as
// given ("" for the provider's public API), the token and how TLS is
// verified.
type SCMProviderRef struct {
	Name     string
	API      string
	TokenRef *SecretRef
	CARef    *ConfigMapKeyRef
	Insecure bool
}

// oneProvider is the one provider of refs that is set (Argo CD takes the
// first of several).
func oneProvider(refs ...*SCMProviderRef) (SCMProviderRef, error) {
	var found []SCMProviderRef
	for _, r := range refs {
		if r != nil {
			found = append(found, *r)
		}
	}
	switch len(found) {
	case 0:
		return SCMProviderRef{}, errors.New("no provider is set (want one of github, gitlab, gitea)")
	case 1:
		return found[0], nil
	}
	return SCMProviderRef{}, errors.New("more than one provider is set (want one of github, gitlab, gitea)")
}

// Provider is the generator's provider: exactly one must be set.
func (p *PullRequestGenerator) Provider() (SCMProviderRef, error) {
	var gh, gl, gt *SCMProviderRef
	if g := p.Github; g != nil {
		gh = &SCMProviderRef{Name: "github", API: g.API, TokenRef: g.TokenRef}
	}
	if g := p.GitLab; g != nil {
		gl = &SCMProviderRef{Name: "gitlab", API: g.API, TokenRef: g.TokenRef, CARef: g.CARef, Insecure: g.Insecure}
	}
	if g := p.Gitea; g != nil {
		gt = &SCMProviderRef{Name: "gitea", API: g.API, TokenRef: g.TokenRef, Insecure: g.Insecure}
	}
	return oneProvider(gh, gl, gt)
}

// SCMProviderGenerator produces one parameter set per repository (and
// branch) of an organization on GitHub, a group on GitLab or an owner on
// Gitea.
type SCMProviderGenerator struct {
	// +optional
	Github *SCMProviderGeneratorGithub `json:"github,omitempty"`
	// +optional
	Gitlab *SCMProviderGeneratorGitlab `json:"gitlab,omitempty"`
	// +optional
	Gitea *SCMProviderGeneratorGitea `json:"gitea,omitempty"`
	// Bitbucket, BitbucketServer, AzureDevOps and AWSCodeCommit are Argo
	// CD's other providers, which tollgate refuses, naming them.
	// +optional
	Bitbucket *apiextensionsv1.JSON `json:"bitbucket,omitempty"`
	// +optional
	BitbucketServer *apiextensionsv1.JSON `json:"bitbucketServer,omitempty"`
	// +optional
	AzureDevOps *apiextensionsv1.JSON `json:"azureDevOps,omitempty"`
	// +optional
	AWSCodeCommit *apiextensionsv1.JSON `json:"awsCodeCommit,omitempty"`
	// Filters keep the repositories (and branches) one of them matches.
	// +optional
	Filters []SCMProviderGeneratorFilter `json:"filters,omitempty"`
	// CloneProtocol picks the url parameter: ssh (the default) or https.
	// +optional
	CloneProtocol string `json:"cloneProtocol,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	Template ApplicationSetTemplate `json:"template,omitzero"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// SCMProviderGeneratorGithub lists the repositories of a GitHub
// organization.
type SCMProviderGeneratorGithub struct {
	Organization string `json:"organization"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// AppSecretName (GitHub App credentials) is refused.
	// +optional
	AppSecretName string `json:"appSecretName,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorGitlab lists the projects of a GitLab group.
type SCMProviderGeneratorGitlab struct {
	Group string `json:"group"`
	// +optional
	IncludeSubgroups bool `json:"includeSubgroups,omitempty"`
	// +optional
	API string `json:"api,omitempty"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// IncludeSharedProjects lists the projects shared with the group too
	// (true when unset).
	// +optional
	IncludeSharedProjects *bool `json:"includeSharedProjects,omitempty"`
	// Topic keeps the projects with this topic.
	// +optional
	Topic string `json:"topic,omitempty"`
	// +optional
	CARef *ConfigMapKeyRef `json:"caRef,omitempty"`
	// +optional
	IncludeArchivedRepos bool `json:"includeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorGitea lists the repositories of a Gitea owner.
type SCMProviderGeneratorGitea struct {
	Owner string `json:"owner"`
	API   string `json:"api"`
	// +optional
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// +optional
	AllBranches bool `json:"allBranches,omitempty"`
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// +optional
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorFilter keeps the repositories (and branches) that
// match all of its conditions; regular expressions are RE2.
type SCMProviderGeneratorFilter struct {
	// +optional
	RepositoryMatch *string `json:"repositoryMatch,omitempty"`
	// +optional
	PathsExist []string `json:"pathsExist,omitempty"`
	// +optional
	PathsDoNotExist []string `json:"pathsDoNotExist,omitempty"`
	// +optional
	LabelMatch *string `json:"labelMatch,omitempty"`
	// +optional
	BranchMatch *string `json:"branchMatch,omitempty"`
}

// Provider is the generator's provider: exactly one must be set.
func (p *SCMProviderGenerator) Provider() (SCMProviderRef, error) {
	var gh, gl, gt *SCMProviderRef
	if g := p.Github; g != nil {
		gh = &SCMProviderRef{Name: "github", API: g.API, TokenRef: g.TokenRef}
	}
	if g := p.Gitlab; g != nil {
		gl = &SCMProviderRef{Name: "gitlab", API: g.API, TokenRef: g.TokenRef, CARef: g.CARef, Insecure: g.Insecure}
	}
	if g := p.Gitea; g != nil {
		gt = &SCMProviderRef{Name: "gitea", API: g.API, TokenRef: g.TokenRef, Insecure: g.Insecure}
	}
	return oneProvider(gh, gl, gt)
}
