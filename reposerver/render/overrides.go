package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// SourceOverrideFile is Argo CD's parameter override file: in a source's
// directory, it is merged into the source before it is rendered. A file
// named .argocd-source-<instance>.yaml is merged after it, for one
// Application only.
const SourceOverrideFile = ".argocd-source.yaml"

// maxOverrideFileBytes bounds an override file; real ones are a few lines.
const maxOverrideFileBytes = 1 << 20

// OverrideFiles are the repository paths of the override files of a source
// at path for the Application instance (see InstanceName), in the order
// they are merged.
func OverrideFiles(path, instance string) []string {
	files := []string{joinRel(path, SourceOverrideFile)}
	if instance != "" {
		files = append(files, joinRel(path, ".argocd-source-"+instance+".yaml"))
	}
	return files
}

// nameOfInstance returns the Application name of an instance name.
func nameOfInstance(instance string) string {
	if _, name, ok := strings.Cut(instance, "_"); ok {
		return name
	}
	return instance
}

// MergeSourceOverrides returns s with the override files of its directory
// in the checkout at root merged in as JSON merge patches (RFC 7396), as
// Argo CD's repo-server does before it detects the source's type:
// SourceOverrideFile first, then .argocd-source-<instance>.yaml. Missing
// files and directories of those names are skipped. The merged source keeps
// the Application's repoURL, path, chart and targetRevision: an override
// file changes how a source renders, never what is fetched. Files leaving
// the root (symlinks included), larger than 1 MiB or not valid YAML are
// errors naming the file.
func MergeSourceOverrides(root string, s AppSource, instance string) (AppSource, error) {
	r, err := openRepo(root)
	if err != nil {
		return s, err
	}
	if _, err := r.clean(s.Source.Path); err != nil {
		return s, nil // the render refuses the path itself
	}
	merged := s.Source
	for _, rel := range OverrideFiles(s.Source.Path, instance) {
		abs, _, err := r.resolve(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return s, fmt.Errorf("%s: override file %s: %w", s.Field, rel, err)
		}
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
			continue
		}
		if merged, err = mergeOverride(merged, abs); err != nil {
			return s, fmt.Errorf("%s: override file %s: %w", s.Field, rel, err)
		}
	}
	merged.RepoURL, merged.Path = s.Source.RepoURL, s.Source.Path
	merged.Chart, merged.TargetRevision = s.Source.Chart, s.Source.TargetRevision
	s.Source = merged
	return s, nil
}

// mergeOverride merge-patches src with the YAML file at abs.
func mergeOverride(src v1alpha1.ApplicationSource, abs string) (v1alpha1.ApplicationSource, error) {
	data, err := readFile(abs, maxOverrideFileBytes)
	if err != nil {
		return src, err
	}
	patch, err := yaml.YAMLToJSON(data)
	if err != nil {
		return src, err
	}
	doc, err := json.Marshal(src)
	if err != nil {
		return src, err
	}
	if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
		return src, err
	}
	// Decoded over a copy of src as Argo CD does: a field the patch
	// removes keeps its value, and a patch of null changes nothing.
	out := src.DeepCopy()
	if err := json.Unmarshal(doc, out); err != nil {
		return src, err
	}
	return *out, nil
}
