package appset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// maxGitFileBytes bounds a file a git files generator reads.
const maxGitFileBytes = 1 << 20

// git returns the parameter sets of a git generator: one per directory
// its directories match, or per object of the files its files match.
func (g *generator) git(ctx context.Context, field string, raw any) ([]paramSet, error) {
	var gg v1alpha1.GitGenerator
	if err := fromMap(field, raw, &gg); err != nil {
		return nil, err
	}
	if len(gg.Directories) == 0 && len(gg.Files) == 0 {
		return nil, fmt.Errorf("%s: set directories or files", field)
	}
	if g.src.Git == nil {
		return nil, fmt.Errorf("%s: no Git repositories to read", field)
	}
	if g.src.Permit != nil {
		if err := g.src.Permit(ctx, field, gg.RepoURL); err != nil {
			return nil, err
		}
	}
	dir, err := g.src.Git.Checkout(ctx, gg.RepoURL, gg.Revision)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	var out []paramSet
	if len(gg.Directories) > 0 {
		var dirs []map[string]any
		dirs, err = g.gitDirectories(field, dir, gg)
		out = paramSets(dirs)
	} else {
		out, err = g.gitFiles(field, dir, gg)
	}
	if err != nil {
		return nil, err
	}
	for _, s := range out {
		if err := g.addValues(field, s.params, gg.Values); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// gitDirectories lists the directories of the checkout (not the root,
// none under a directory whose name starts with "."), in walk order, and
// keeps those that match an included pattern and no excluded one, with
// path.Match.
func (g *generator) gitDirectories(field, root string, gg v1alpha1.GitGenerator) ([]map[string]any, error) {
	var out []map[string]any
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !directoryMatches(gg.Directories, rel) {
			return nil
		}
		out = append(out, g.pathParams(rel, "", gg.PathParamPrefix))
		if len(out) > MaxParameterSets {
			return fmt.Errorf("more than %d directories match", MaxParameterSets)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s.directories: %w", field, err)
	}
	return out, nil
}

// directoryMatches reports whether rel matches an included pattern and no
// excluded one.
func directoryMatches(items []v1alpha1.GitDirectoryGeneratorItem, rel string) bool {
	included := false
	for _, it := range items {
		if ok, err := path.Match(it.Path, rel); err == nil && ok {
			if it.Exclude {
				return false
			}
			included = true
		}
	}
	return included
}

// gitFiles reads the regular files of the checkout that an included
// pattern matches and no excluded one (patterns as git pathspecs: "*"
// crosses "/", a directory matches what is under it), sorted, and returns
// one parameter set per object each holds (a file of a list holds several).
// Each set names its file: its content is the repository's, never quoted.
func (g *generator) gitFiles(field, root string, gg v1alpha1.GitGenerator) ([]paramSet, error) {
	var include, exclude []*regexp.Regexp
	for i, it := range gg.Files {
		re, err := pathspec(it.Path)
		if err != nil {
			return nil, fmt.Errorf("%s.files[%d].path: %w", field, i, err)
		}
		if it.Exclude {
			exclude = append(exclude, re)
		} else {
			include = append(include, re)
		}
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if matchesAny(include, rel) && !matchesAny(exclude, rel) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s.files: %w", field, err)
	}
	slices.Sort(files)
	var out []paramSet
	for _, rel := range files {
		objs, err := readParamFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("%s.files: %s: %w", field, rel, err)
		}
		for _, obj := range objs {
			var params map[string]any
			if g.r.goTemplate {
				params = obj
			} else {
				params = stringParams(flatten(obj))
			}
			for k, v := range g.pathParams(path.Dir(rel), path.Base(rel), gg.PathParamPrefix) {
				params[k] = v
			}
			out = append(out, paramSet{params: params, files: []reposerver.ParamFile{{RepoURL: reposerver.RedactURL(gg.RepoURL), Path: rel}}})
			if len(out) > MaxParameterSets {
				return nil, fmt.Errorf("%s.files: more than %d parameter sets", field, MaxParameterSets)
			}
		}
	}
	return out, nil
}

// readParamFile reads a JSON or YAML file of one object or a list of them
// (its first YAML document only, as Argo CD reads it).
func readParamFile(name string) ([]map[string]any, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxGitFileBytes {
		return nil, fmt.Errorf("file too large: %d bytes (limit %d)", fi.Size(), maxGitFileBytes)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var list []map[string]any
	if err := yaml.Unmarshal(data, &list); err == nil {
		if len(list) == 0 {
			return []map[string]any{{}}, nil
		}
		return list, nil
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, errors.New("unable to parse file: want a JSON or YAML object or list of objects")
	}
	if obj == nil {
		obj = map[string]any{}
	}
	return []map[string]any{obj}, nil
}

// pathParams are the path parameters of a directory (file "") or of a
// file in directory dir, under prefix when set.
func (g *generator) pathParams(dir, file, prefix string) map[string]any {
	segments := []any{}
	for _, s := range strings.Split(dir, "/") {
		if s != "" && s != "." {
			segments = append(segments, s)
		}
	}
	base := path.Base(dir)
	if g.r.goTemplate {
		p := map[string]any{
			"path": dir, "basename": base, "basenameNormalized": SanitizeName(base), "segments": segments,
		}
		if file != "" {
			p["filename"], p["filenameNormalized"] = file, SanitizeName(file)
		}
		if prefix != "" {
			return map[string]any{prefix: map[string]any{"path": p}}
		}
		return map[string]any{"path": p}
	}
	key := "path"
	if prefix != "" {
		key = prefix + ".path"
	}
	out := map[string]any{key: dir, key + ".basename": base, key + ".basenameNormalized": SanitizeName(base)}
	if file != "" {
		out[key+".filename"], out[key+".filenameNormalized"] = file, SanitizeName(file)
	}
	for i, s := range segments {
		out[fmt.Sprintf("%s[%d]", key, i)] = s
	}
	return out
}

// pathspec compiles a git pathspec pattern: "*" and "?" match any
// characters, "/" included; "[...]" a class; a pattern also matches every
// file under the directory it names.
func pathspec(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			end := strings.IndexByte(pattern[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ in %q", pattern)
			}
			class := pattern[i+1 : i+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += end
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(regexp.QuoteMeta(string(pattern[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("(/.*)?$")
	return regexp.Compile(b.String())
}

func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
