package application

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/discovery"
)

// versionTTL is how long a destination cluster's server version is reused
// before it is read again (an upgrade changes it).
const versionTTL = 10 * time.Minute

// clusterVersion caches a cluster's server version.
type clusterVersion struct {
	mu   sync.Mutex
	at   time.Time
	text string
	// last is text, for readers that must not wait on mu (held during a
	// request): the metrics.
	last atomic.Pointer[string]
}

// capabilities returns what Helm charts of Applications on c see as
// .Capabilities, as Argo CD sends them to its repo-server: the server
// version and every API version, "group/version" and "group/version/Kind",
// sorted. API versions come from the cluster's cached discovery, which the
// applier refreshes when it meets a kind it does not know; an API group
// that fails discovery is left out, as Argo CD's cluster cache leaves it
// out.
func (c *cluster) capabilities(ctx context.Context, now time.Time) (string, []string, error) {
	kubeVersion, err := c.serverVersion(ctx, now)
	if err != nil {
		return "", nil, err
	}
	_, lists, err := discovery.ServerGroupsAndResources(c.discovery)
	if err != nil && (!discovery.IsGroupDiscoveryFailedError(err) || len(lists) == 0) {
		return "", nil, fmt.Errorf("read API versions of %s: %w", c.server, err)
	}
	set := map[string]bool{}
	for _, l := range lists {
		set[l.GroupVersion] = true
		for _, r := range l.APIResources {
			if r.Kind != "" {
				set[l.GroupVersion+"/"+r.Kind] = true
			}
		}
	}
	apiVersions := make([]string, 0, len(set))
	for v := range set {
		apiVersions = append(apiVersions, v)
	}
	sort.Strings(apiVersions)
	return kubeVersion, apiVersions, nil
}

// serverVersion returns the cluster's version ("v1.33.2"), read at most
// once per versionTTL.
func (c *cluster) serverVersion(ctx context.Context, now time.Time) (string, error) {
	c.kubeVersion.mu.Lock()
	defer c.kubeVersion.mu.Unlock()
	if c.kubeVersion.text != "" && now.Sub(c.kubeVersion.at) < versionTTL {
		return c.kubeVersion.text, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	v, err := c.discovery.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("read server version of %s: %w", c.server, err)
	}
	c.kubeVersion.text, c.kubeVersion.at = v.GitVersion, now
	c.kubeVersion.last.Store(&v.GitVersion)
	return v.GitVersion, nil
}
