package certs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tollgate-dev/tollgate/test/testutil"
)

// logSink collects log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lines = append(s.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (s *logSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// waitFor waits until cond holds, checking every 10ms for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Poll{Timeout: 10 * time.Second, Interval: 10 * time.Millisecond}.Eventually(t, what, func() (bool, string) { return cond(), "" })
}

func TestStartFollowsOtherReplica(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	var failGets atomic.Int32
	failGets.Store(3)
	base := newFakeClient(nil, testWebhookConfig())
	flaky := newFakeClientOver(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if failGets.Add(-1) >= 0 {
				return errors.New("apiserver unavailable")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	opts := testOptions(clk)
	opts.PollInterval = 10 * time.Millisecond
	follower := NewManager(flaky, opts)

	logs := &logSink{}
	ctx, cancel := context.WithCancel(logr.NewContext(t.Context(), logs.logger()))
	done := make(chan error, 1)
	go func() { done <- follower.Start(ctx) }()
	// The first Ensure fails; the poll retries it.
	waitFor(t, "the follower to load a certificate", follower.Ready)

	other := NewManager(base, testOptions(clk))
	clk.Step(9 * 30 * day)
	rotated := mustEnsure(t, other)
	rv := getSecret(t, base).ResourceVersion
	waitFor(t, "the follower to serve the rotated certificate", func() bool {
		c, _ := follower.GetCertificate(nil)
		return c.Leaf.SerialNumber.Cmp(rotated.Leaf.SerialNumber) == 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
	if got := getSecret(t, base).ResourceVersion; got != rv {
		t.Errorf("follower wrote the Secret after the other replica rotated it")
	}

	lines := logs.all()
	if !strings.Contains(strings.Join(lines, "\n"), "apiserver unavailable") {
		t.Errorf("the failed Ensure was not logged; logs:\n%s", strings.Join(lines, "\n"))
	}
	sec := getSecret(t, base)
	for _, l := range lines {
		if strings.Contains(l, "PRIVATE KEY") || strings.Contains(l, "BEGIN") || strings.Contains(l, string(sec.Data[SecretKeyKey][40:80])) {
			t.Errorf("log line holds key material: %s", l)
		}
	}
}

func TestStartRejectsInvalidOptions(t *testing.T) {
	m := NewManager(newFakeClient(nil), Options{Namespace: testNamespace})
	if err := m.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "service name is required") {
		t.Errorf("Start error = %v, want the invalid options", err)
	}
	if m.NeedLeaderElection() {
		t.Errorf("NeedLeaderElection() = true, want every replica to run it")
	}
}
