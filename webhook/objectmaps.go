package webhook

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// objectMaps keeps the map form (policies.ObjectMap) of the Applications
// and AppProjects the webhook reads from its cache, by uid and
// resourceVersion: every review of an object an Application tracks, and
// of an Application, needs both, and converting them by reflection each
// time cost a review more than its decoding. A map is shared by the
// reviews that read the same version, so nothing may modify it (the
// evaluator and policies.BuildInputs only read theirs). Only objects read
// from the cache go through it: one a review carries has the stored
// object's uid, and may have its resourceVersion with other content. An
// object without a uid or a resourceVersion is converted every time.
type objectMaps struct {
	mu      sync.RWMutex
	entries map[types.UID]objectMap
}

// objectMap is one object's map at one resourceVersion.
type objectMap struct {
	resourceVersion string
	m               map[string]any
}

// maxObjectMaps bounds the kept maps (each about the size of the cache's
// copy of its object, status included); when full, an arbitrary one
// makes room.
const maxObjectMaps = 1024

func (c *objectMaps) application(app *v1alpha1.Application) (map[string]any, error) {
	return c.of(app, v1alpha1.ApplicationKind)
}

func (c *objectMaps) project(proj *v1alpha1.AppProject) (map[string]any, error) {
	return c.of(proj, v1alpha1.AppProjectKind)
}

// of returns obj's map, converting it when its version is not kept.
func (c *objectMaps) of(obj client.Object, kind string) (map[string]any, error) {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	if uid != "" && rv != "" {
		c.mu.RLock()
		e, ok := c.entries[uid]
		c.mu.RUnlock()
		if ok && e.resourceVersion == rv {
			return e.m, nil
		}
	}
	m, err := policies.ObjectMap(obj, v1alpha1.GroupVersion.String(), kind)
	if err != nil || uid == "" || rv == "" {
		return m, err
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = make(map[types.UID]objectMap)
	}
	if _, ok := c.entries[uid]; !ok && len(c.entries) >= maxObjectMaps {
		for old := range c.entries {
			delete(c.entries, old)
			break
		}
	}
	c.entries[uid] = objectMap{resourceVersion: rv, m: m}
	c.mu.Unlock()
	return m, nil
}
