package check

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"

	"github.com/tollgate-dev/tollgate/internal/bounded"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// maxGitFileBytes bounds the reads of .git/config and .git files.
const maxGitFileBytes = 1 << 20

// repositoryURL returns the URL of the repository under test in the form
// reposerver.NormalizeURL gives it, the one the engine matches repositories
// in: given, or else the origin remote of the Git repository containing
// root (spelled rootDir by the user). When there is none it returns "" and
// the note explaining why Applications are not rendered. A given URL that
// is not a repository URL is an error.
func repositoryURL(given string, root repoRoot, rootDir string) (string, string, error) {
	if strings.TrimSpace(given) != "" {
		u := reposerver.NormalizeURL(given)
		if u == "" {
			return "", "", fmt.Errorf("invalid --repo-url %q: not a repository URL", reposerver.RedactURL(given))
		}
		return u, "", nil
	}
	origin, err := originURL(root.real)
	if err != nil {
		return "", "", fmt.Errorf("find repository URL (set --repo-url): %w", err)
	}
	if origin == "" {
		return "", "Applications are not rendered: no --repo-url given and no origin remote found for " + rootDir, nil
	}
	u := reposerver.NormalizeURL(origin)
	if u == "" {
		return "", fmt.Sprintf("Applications are not rendered: the origin remote of %s (%s) is not a repository URL; set --repo-url",
			rootDir, reposerver.RedactURL(origin)), nil
	}
	return u, "", nil
}

// originURL returns the URL of the "origin" remote of the Git repository
// that contains dir, read from its config file without running git. It
// returns "" and no error when dir is in no Git repository or the
// repository has no origin remote.
func originURL(dir string) (string, error) {
	gitDir, err := findGitDir(dir)
	if err != nil || gitDir == "" {
		return "", err
	}
	path := filepath.Join(gitDir, "config")
	data, err := bounded.ReadFile(path, maxGitFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read git config: %w", err)
	}
	cfg, err := gitconfig.ReadConfig(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("parse git config %s: %w", path, err)
	}
	origin, ok := cfg.Remotes["origin"]
	if !ok || len(origin.URLs) == 0 {
		return "", nil
	}
	return origin.URLs[0], nil
}

// findGitDir returns the directory holding the Git configuration of the
// repository that contains dir: the nearest .git directory above dir, or
// the directory a .git file (worktree, submodule) points to, followed to
// its common directory. It returns "" when there is none.
func findGitDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find git repository of %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		candidate := filepath.Join(d, ".git")
		fi, err := os.Stat(candidate)
		switch {
		case err == nil && fi.IsDir():
			return candidate, nil
		case err == nil && fi.Mode().IsRegular():
			return gitDirFromFile(candidate)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("find git repository of %s: %w", dir, err)
		}
		if parent := filepath.Dir(d); parent == d {
			return "", nil
		}
	}
}

// gitDirFromFile follows a ".git" file ("gitdir: PATH") to the directory
// holding the configuration, through its "commondir" file when it has one
// (linked worktrees keep the config in the main repository).
func gitDirFromFile(file string) (string, error) {
	data, err := bounded.ReadFile(file, maxGitFileBytes)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", fmt.Errorf("read %s: not a gitdir file", file)
	}
	gitDir := strings.TrimSpace(target)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(filepath.Dir(file), gitDir)
	}
	common, err := bounded.ReadFile(filepath.Join(gitDir, "commondir"), maxGitFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Join(gitDir, "commondir"), err)
	}
	c := strings.TrimSpace(string(common))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return c, nil
}

// headRevision returns the commit checked out in the Git repository that
// contains dir, or "" when there is none (or HEAD cannot be read).
func headRevision(dir string) string {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return ""
	}
	head, err := r.Head()
	if err != nil {
		return ""
	}
	return head.Hash().String()
}
