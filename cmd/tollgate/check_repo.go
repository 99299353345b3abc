package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/config"

	"github.com/tollgate-dev/tollgate/internal/bounded"
)

// maxGitFileBytes bounds the reads of .git/config and .git files.
const maxGitFileBytes = 1 << 20

// normalizeRepoURL returns the form in which two spellings of a repository
// URL compare equal: lower case, without trailing slashes and without one
// ".git" suffix.
func normalizeRepoURL(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	u = strings.TrimRight(u, "/")
	u = strings.TrimSuffix(u, ".git")
	return strings.TrimRight(u, "/")
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
