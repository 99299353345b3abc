package certs

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// Start runs Ensure at once, then every CheckInterval, and every
// PollInterval when the Secret has changed (another replica rotated it) or
// the last Ensure failed. Errors are logged and retried; Start returns nil
// when ctx is done, and an error only for invalid options.
func (m *Manager) Start(ctx context.Context) error {
	if err := m.opts.validate(); err != nil {
		return err
	}
	log := logr.FromContextOrDiscard(ctx).WithName("certs")
	ctx = logr.NewContext(ctx, log)
	ensure := func() {
		if _, err := m.Ensure(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Ensure webhook certificates")
		}
	}
	ensure()
	check := time.NewTicker(m.opts.CheckInterval)
	defer check.Stop()
	poll := time.NewTicker(m.opts.PollInterval)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-check.C:
			ensure()
		case <-poll.C:
			if m.stale(ctx) {
				ensure()
			}
		}
	}
}

// stale reports whether Ensure should run before the next check: the last
// one failed, or the Secret is not the one last loaded.
func (m *Manager) stale(ctx context.Context) bool {
	m.mu.Lock()
	rv, failed := m.lastRV, m.lastErr != nil
	m.mu.Unlock()
	if failed || rv == "" {
		return true
	}
	sec := &corev1.Secret{}
	if err := m.c.Get(ctx, m.secretKey(), sec); err != nil {
		// Ensure reads it again and reports what is wrong.
		return true
	}
	return sec.ResourceVersion != rv
}
