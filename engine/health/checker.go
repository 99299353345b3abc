package health

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// IgnoreHealthAnnotation set to "true" on an object leaves it out of its
// Application's health, and syncs do not wait for it, as in Argo CD.
const IgnoreHealthAnnotation = "argocd.argoproj.io/ignore-healthcheck"

// Checker assesses health as Argo CD does: an object being deleted is
// Progressing; then a Lua health check if one is found for its kind (the
// argocd-cm customizations, the customizations directories, the built-in
// library, in that order); then the built-in Go checks and kstatus. It is
// safe for concurrent use; SetOverrides swaps the argocd-cm scripts.
type Checker struct {
	dirs    []fs.FS
	scripts atomic.Pointer[scripts]
}

// NewChecker returns a Checker reading the customizations directories
// dirs (Argo CD's resource_customizations layout) before the built-in
// library.
func NewChecker(dirs ...string) (*Checker, error) {
	fsys, err := openDirs(dirs)
	if err != nil {
		return nil, err
	}
	c := &Checker{dirs: append(fsys, Builtin())}
	c.SetOverrides(nil)
	return c, nil
}

// SetOverrides replaces the argocd-cm health checks, keyed by
// CustomizationKey (wildcards allowed).
func (c *Checker) SetOverrides(overrides map[string]string) {
	c.scripts.Store(&scripts{overrides: overrides, dirs: c.dirs})
}

// defaultChecker has the built-in library only.
var defaultChecker = func() *Checker {
	c, err := NewChecker()
	if err != nil {
		panic(err) // no directories to open
	}
	return c
}()

// Assess returns the health of obj with the built-in checks (Checker.Assess
// without customizations).
func Assess(obj *unstructured.Unstructured) (Result, error) {
	return defaultChecker.Assess(obj)
}

// Ignored reports whether obj opts out of health assessment with
// IgnoreHealthAnnotation.
func Ignored(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetAnnotations()[IgnoreHealthAnnotation] == "true"
}

// Assess returns the health of obj. An error means obj could not be judged
// (a field has the wrong type, a Lua check failed); the Result is then
// Unknown with the error as its message, which is what Argo CD shows.
func (c *Checker) Assess(obj *unstructured.Unstructured) (Result, error) {
	if obj == nil || obj.Object == nil {
		return Result{Status: Unknown, Message: "no object"}, errors.New("assess health: no object")
	}
	if obj.GetDeletionTimestamp() != nil && !hasFinalizer(obj, hookFinalizer) {
		return Result{Status: Progressing, Message: "Pending deletion"}, nil
	}
	gvk := obj.GroupVersionKind()
	if script, from := c.scripts.Load().find(gvk.GroupKind()); script != "" {
		res, err := runLua(context.Background(), script, obj.Object)
		if err != nil {
			err = fmt.Errorf("assess health of %s with %s: %w", describe(obj), from, err)
			return Result{Status: Unknown, Message: err.Error()}, err
		}
		return res, nil
	}
	check := checkFor(gvk)
	if check == nil {
		check = assessGeneric
	}
	res, err := check(obj)
	if err != nil {
		err = fmt.Errorf("assess health of %s: %w", describe(obj), err)
		return Result{Status: Unknown, Message: err.Error()}, err
	}
	return res, nil
}
