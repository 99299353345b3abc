package ui

import (
	"context"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/engine/controller/application"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// person is what a request works with: who, a client acting as them, and
// their REST config.
type person struct {
	*identity
	c   client.Client
	cfg *rest.Config

	// diffs compares Applications as this person (diff), built on first
	// use.
	mu    sync.Mutex
	diffs *application.Differ
}

// differ returns the person's Differ, built with build the first time.
func (p *person) differ(build func() (*application.Differ, error)) (*application.Differ, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.diffs == nil {
		d, err := build()
		if err != nil {
			return nil, err
		}
		p.diffs = d
	}
	return p.diffs, nil
}

// close stops what the person's Differ started.
func (p *person) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.diffs != nil {
		p.diffs.Close()
		p.diffs = nil
	}
}

// maxCachedClients bounds clientCache; past it, the cache starts over.
const maxCachedClients = 1000

// clientCache keeps one client per person: building one is cheap (the
// transport and the REST mapper are shared), but not free.
type clientCache struct {
	base   *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	mu     sync.Mutex
	byKey  map[string]*person
}

func newClientCache(base *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper) *clientCache {
	return &clientCache{base: base, scheme: scheme, mapper: mapper, byKey: map[string]*person{}}
}

func (cc *clientCache) get(id *identity) (*person, error) {
	k := id.key()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if p, ok := cc.byKey[k]; ok {
		return p, nil
	}
	cfg := id.config(cc.base)
	c, err := client.New(cfg, client.Options{Scheme: cc.scheme, Mapper: cc.mapper})
	if err != nil {
		return nil, err
	}
	if len(cc.byKey) >= maxCachedClients {
		cc.closeLocked()
	}
	p := &person{identity: id, c: c, cfg: cfg}
	cc.byKey[k] = p
	return p, nil
}

// closeAll forgets every person, stopping what their Differs started.
func (cc *clientCache) closeAll() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.closeLocked()
}

func (cc *clientCache) closeLocked() {
	for _, p := range cc.byKey {
		p.close()
	}
	clear(cc.byKey)
}

// accessTTL is how long an access review's answer is reused.
const accessTTL = 30 * time.Second

// accessCache remembers SelfSubjectAccessReview answers per person.
type accessCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[accessKey]accessAnswer
}

type accessKey struct {
	person string
	attrs  authorizationv1.ResourceAttributes
}

type accessAnswer struct {
	allowed bool
	expires time.Time
}

func newAccessCache(ttl time.Duration) *accessCache {
	return &accessCache{ttl: ttl, m: map[accessKey]accessAnswer{}}
}

// allowed asks the API server, as p, whether p may verb resource (of
// group) named name in namespace; a failed review is a no.
func (ac *accessCache) allowed(ctx context.Context, p *person, verb, group, resource, namespace, name string) bool {
	attrs := authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: namespace, Name: name}
	k := accessKey{p.key(), attrs}
	now := time.Now()
	ac.mu.Lock()
	if a, ok := ac.m[k]; ok && now.Before(a.expires) {
		ac.mu.Unlock()
		return a.allowed
	}
	ac.mu.Unlock()
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
	if err := p.c.Create(ctx, review); err != nil {
		return false
	}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if len(ac.m) >= 10*maxCachedClients {
		clear(ac.m)
	}
	ac.m[k] = accessAnswer{allowed: review.Status.Allowed, expires: now.Add(ac.ttl)}
	return review.Status.Allowed
}
