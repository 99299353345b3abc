package devstack

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/reposerver/render"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Install creates the AppProjects, then the Applications, of the example
// repository's argocd/ directory as AdminUser, so the webhook judges them
// as it judges anyone's kubectl apply. It waits for the webhook to answer
// and returns the Applications' names.
func (s *Stack) Install(ctx context.Context) ([]string, error) {
	dir := filepath.Join(s.opts.Examples, "config-repo", "argocd")
	objs, err := readObjects(dir, s.rewrite)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].GetKind() == "AppProject" && objs[j].GetKind() != "AppProject" })
	var apps []string
	for _, o := range objs {
		if err := s.create(ctx, o); err != nil {
			return nil, err
		}
		if o.GetKind() == "Application" {
			apps = append(apps, o.GetName())
		}
	}
	sort.Strings(apps)
	return apps, nil
}

// create creates obj, retrying while the webhook does not answer yet, and
// while it does not know an Application's AppProject yet: Install creates
// the projects first, but the webhook learns of them through its cache.
func (s *Stack) create(ctx context.Context, obj *unstructured.Unstructured) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := s.Client.Create(ctx, obj.DeepCopy())
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
			return true, nil
		case strings.Contains(err.Error(), "failed calling webhook"),
			obj.GetKind() == "Application" && strings.Contains(err.Error(), "[project-not-found]"):
			return false, nil
		default:
			return false, err
		}
	})
	if err != nil {
		return fmt.Errorf("create %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// rewrite points the example repository's URL at the served repository.
func (s *Stack) rewrite(_ string, data []byte) []byte {
	return bytes.ReplaceAll(data, []byte(ExampleRepoURL), []byte(s.repoURL))
}

// readObjects decodes every document of the .yaml files under dir (a
// file or a directory), each passed through rewrite, with the renderer's
// decoder and limits.
func readObjects(dir string, rewrite func(string, []byte) []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs, _, err := render.Decode(path, rewrite(path, data), render.DefaultLimits())
		if err != nil {
			return err
		}
		for _, d := range docs {
			objs = append(objs, &unstructured.Unstructured{Object: d.Object})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return objs, nil
}
