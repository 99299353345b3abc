package ui

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// The live updates: one informer on Applications for the whole process,
// fanned out to every open /events stream. A stream gets the namespace and
// name of a changed Application only if its person may get it; the page
// then re-fetches what it shows, as that person. Nothing polls.

// maxStreams bounds the open /events streams of the process.
const maxStreams = 1000

// heartbeat keeps idle streams open through proxies.
const heartbeat = 25 * time.Second

// hub fans Application changes out to the subscribed streams.
type hub struct {
	mu   sync.Mutex
	subs map[chan client.ObjectKey]struct{}
	done chan struct{}
	once sync.Once
}

func newHub() *hub {
	return &hub{subs: map[chan client.ObjectKey]struct{}{}, done: make(chan struct{})}
}

// watch subscribes to the Application informer of c until ctx ends, then
// closes every stream.
func (h *hub) watch(ctx context.Context, c cache.Cache) error {
	inf, err := c.GetInformer(ctx, &v1alpha1.Application{})
	if err != nil {
		return fmt.Errorf("ui: watch applications: %w", err)
	}
	send := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if o, ok := obj.(client.Object); ok {
			h.publish(client.ObjectKeyFromObject(o))
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { send(obj) },
		UpdateFunc: func(_, obj any) { send(obj) },
		DeleteFunc: send,
	})
	if err != nil {
		return fmt.Errorf("ui: watch applications: %w", err)
	}
	go func() {
		<-ctx.Done()
		_ = inf.RemoveEventHandler(reg)
		h.once.Do(func() { close(h.done) })
	}()
	return nil
}

// publish offers key to every stream; a stream that is behind misses it
// and is told to reload instead (its buffer holds the marker).
func (h *hub) publish(key client.ObjectKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- key:
		default:
		}
	}
}

func (h *hub) subscribe() (chan client.ObjectKey, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) >= maxStreams {
		return nil, false
	}
	ch := make(chan client.ObjectKey, 64)
	h.subs[ch] = struct{}{}
	return ch, true
}

func (h *hub) unsubscribe(ch chan client.ObjectKey) {
	h.mu.Lock()
	delete(h.subs, ch)
	h.mu.Unlock()
}

// events streams `event: application` with data "namespace/name" for each
// change of an Application the person may get.
func (s *Server) events(w http.ResponseWriter, r *http.Request, p *person) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, ok := s.hub.subscribe()
	if !ok {
		http.Error(w, "too many open event streams", http.StatusServiceUnavailable)
		return
	}
	defer s.hub.unsubscribe(ch)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	fmt.Fprint(w, "retry: 3000\n\n")
	fl.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.hub.done:
			return
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case key := <-ch:
			if !s.shows(key.Namespace) || !s.access.allowed(r.Context(), p, "get", v1alpha1.GroupVersion.Group, "applications", key.Namespace, key.Name) {
				continue
			}
			fmt.Fprintf(w, "event: application\ndata: %s/%s\n\n", key.Namespace, key.Name)
		}
		fl.Flush()
	}
}
