package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseGitSpec holds ParseGitSpec to kustomize's repospec: the clone
// URL (its CloneSpec), the path in the repository and the ref of
// kustomize's own examples, and its refusals.
func TestParseGitSpec(t *testing.T) {
	tests := []struct {
		entry string
		want  GitSpec
	}{
		// GitHub shorthand and its spellings.
		{"github.com/org/repo//base?ref=v1", GitSpec{RepoURL: "https://github.com/org/repo", Path: "base", Ref: "v1"}},
		{"gitHub.com/someOrg/someRepo/foo/krusty.txt?ref=group/version", GitSpec{RepoURL: "https://github.com/someOrg/someRepo", Path: "foo/krusty.txt", Ref: "group/version"}},
		{"github.com:someOrg/someRepo", GitSpec{RepoURL: "https://github.com/someOrg/someRepo"}},
		{"http://github.com/someorg/somerepo/somedir", GitSpec{RepoURL: "https://github.com/someorg/somerepo", Path: "somedir"}},
		{"hTTps://github.com/kubernetes/website?ref=master", GitSpec{RepoURL: "https://github.com/kubernetes/website", Ref: "master"}},
		{"http://github.com/someorg/somerepo.git/somedir", GitSpec{RepoURL: "https://github.com/someorg/somerepo.git", Path: "somedir"}},
		{"git@github.com:someorg/somerepo/somedir", GitSpec{RepoURL: "git@github.com:someorg/somerepo", Path: "somedir"}},
		{"git@github.com/someorg/somerepo/somepath", GitSpec{RepoURL: "git@github.com:someorg/somerepo", Path: "somepath"}},
		{"git::git@github.com:someOrg/someRepo", GitSpec{RepoURL: "git@github.com:someOrg/someRepo"}},
		{"org-12345@github.com/someOrg/someRepo", GitSpec{RepoURL: "org-12345@github.com:someOrg/someRepo"}},
		{"ssh://git@github.com/kubernetes-sigs/kustomize//examples/multibases/dev?ref=v1.0.6", GitSpec{RepoURL: "git@github.com:kubernetes-sigs/kustomize", Path: "examples/multibases/dev", Ref: "v1.0.6"}},
		{"https://github.com/kubernetes-sigs/kustomize//examples/multibases/dev/?ref=v1.0.6", GitSpec{RepoURL: "https://github.com/kubernetes-sigs/kustomize", Path: "examples/multibases/dev", Ref: "v1.0.6"}},
		// Other hosts.
		{"https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir?ref=testbranch", GitSpec{RepoURL: "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo", Path: "somedir", Ref: "testbranch"}},
		{"https://fabrikops2.visualstudio.com/someorg/somerepo?ref=master", GitSpec{RepoURL: "https://fabrikops2.visualstudio.com/someorg/somerepo", Ref: "master"}},
		{"git@gitlab2.sqtools.ru:infra/kubernetes/thanos-base.git?ref=v0.1.0", GitSpec{RepoURL: "git@gitlab2.sqtools.ru:infra/kubernetes/thanos-base.git", Ref: "v0.1.0"}},
		{"git@bitbucket.org:company/project.git//path?ref=branch", GitSpec{RepoURL: "git@bitbucket.org:company/project.git", Path: "path", Ref: "branch"}},
		{"ssh://git@bitbucket.org/company/project.git//path?ref=branch", GitSpec{RepoURL: "ssh://git@bitbucket.org/company/project.git", Path: "path", Ref: "branch"}},
		{"ssh://git.example.com:7999/someOrg/someRepo/README.md", GitSpec{RepoURL: "ssh://git.example.com:7999/someOrg/someRepo", Path: "README.md"}},
		{"https://itfs.mycompany.com/collection/project/_git/somerepos/somedir?version=v1.0.0", GitSpec{RepoURL: "https://itfs.mycompany.com/collection/project/_git/somerepos", Path: "somedir", Ref: "v1.0.0"}},
		{"git::https://itfs.mycompany.com/collection/project/_git/somerepos", GitSpec{RepoURL: "https://itfs.mycompany.com/collection/project/_git/somerepos"}},
		{"https://username@dev.azure.com/org/project/_git/repo//path/to/kustomization/root", GitSpec{RepoURL: "https://username@dev.azure.com/org/project/_git/repo", Path: "path/to/kustomization/root"}},
		{"https://bitbucket.example.com/scm/project/repository.git", GitSpec{RepoURL: "https://bitbucket.example.com/scm/project/repository.git"}},
		{"https://example.org/path/to/repo//examples/multibases/dev", GitSpec{RepoURL: "https://example.org/path/to/repo", Path: "examples/multibases/dev"}},
		{"https://example.org/path/to/repo.git/examples/multibases/dev", GitSpec{RepoURL: "https://example.org/path/to/repo.git", Path: "examples/multibases/dev"}},
		{"ssh://alice@example.com/path/to/repo//examples/multibases/dev", GitSpec{RepoURL: "ssh://alice@example.com/path/to/repo", Path: "examples/multibases/dev"}},
		{"ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git", GitSpec{RepoURL: "ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git"}},
		{"git@gitlab.com/user:name/YOUR-REPOSITORY.git/path", GitSpec{RepoURL: "git@gitlab.com/user:name/YOUR-REPOSITORY.git", Path: "path"}},
		{"https://authority/org/repo/?ref=includes.git/for_some_reason", GitSpec{RepoURL: "https://authority/org/repo", Ref: "includes.git/for_some_reason"}},
		{"https://authority/org/repo?version=v2&ref=v3", GitSpec{RepoURL: "https://authority/org/repo", Ref: "v3"}},
		{"file:///a/b/c/someRepo?ref=someBranch", GitSpec{RepoURL: "file:///a/b/c/someRepo", Ref: "someBranch"}},
		{"file://a/b/c/someRepo.git/somepath?ref=someBranch", GitSpec{RepoURL: "file://a/b/c/someRepo.git", Path: "somepath", Ref: "someBranch"}},
		// The test Git server's form.
		{"http://127.0.0.1:8080/base.git//base?ref=main", GitSpec{RepoURL: "http://127.0.0.1:8080/base.git", Path: "base", Ref: "main"}},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			got, err := ParseGitSpec(tt.entry)
			if err != nil {
				t.Fatalf("ParseGitSpec: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseGitSpec(%q) (-want +got):\n%s", tt.entry, d)
			}
		})
	}
	for _, bad := range []string{
		"/tmp", "../../tmp", "src/github.com/org/repo/path", "iauhsdiuashduas", "htxxxtp://github.com/",
		"ssh://git.example.com", "git::___", "https://host?ref=group/version/minor_version",
		"https://github.com/org/repo.git//path/../../exits/repo", "github.com!org/repo.git//path", "gh:org/repo",
		"https://github.com/thisisa404.yaml", "file:////tmp//path/to/whatever", "git@scp://github.com/org/repo.git//path",
	} {
		if got, err := ParseGitSpec(bad); err == nil {
			t.Errorf("ParseGitSpec(%q) = %+v, want an error", bad, got)
		}
	}
}

// TestIsRemoteFile: an http(s) URL of a manifest file without a Git
// marker is a file kustomize would download; a Git spec is not.
func TestIsRemoteFile(t *testing.T) {
	for entry, want := range map[string]bool{
		"https://raw.githubusercontent.com/org/repo/main/deploy.yaml": true,
		"http://example.com/manifests/all.YML":                        true,
		"https://example.com/crds.json":                               true,
		"https://github.com/org/repo//deploy.yaml":                    false,
		"https://github.com/org/repo/deploy.yaml?ref=v1":              false,
		"https://git.example.com/org/repo.git/deploy.yaml":            false,
		"https://dev.azure.com/org/p/_git/repo/deploy.yaml":           false,
		"git::https://example.com/org/repo/deploy.yaml":               false,
		"https://github.com/org/repo/base":                            false,
		"github.com/org/repo/deploy.yaml":                             false,
	} {
		if got := isRemoteFile(entry); got != want {
			t.Errorf("isRemoteFile(%q) = %v, want %v", entry, got, want)
		}
	}
}

// FuzzParseGitSpec: any entry a tenant writes parses or is refused without
// panicking, and a parsed spec names a repository and a path that stays in
// it.
func FuzzParseGitSpec(f *testing.F) {
	for _, s := range []string{
		"github.com/org/repo//base?ref=v1", "git@host:org/repo.git//p?version=v2", "ssh://git@host:7999/o/r//p",
		"https://dev.azure.com/o/p/_git/r/sub", "file:///a/b?ref=x", "git::https://h/o/r.git/p", "https://h/o/r//../x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		spec, err := ParseGitSpec(entry)
		if err != nil {
			return
		}
		if spec.RepoURL == "" || spec.Path == ".." || strings.HasPrefix(spec.Path, "../") || strings.HasPrefix(spec.Path, "/") {
			t.Errorf("ParseGitSpec(%q) = %+v", entry, spec)
		}
		_ = isRemoteFile(entry)
	})
}
