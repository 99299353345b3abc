package apply

import (
	"maps"
	"net/http"
	"sync"
)

// CallCounter counts the HTTP requests made to the API server, by method.
// Install it on a rest.Config before building clients:
//
//	var calls apply.CallCounter
//	cfg.Wrap(calls.Wrap)
//
// The zero value is ready to use and it is safe for concurrent use.
type CallCounter struct {
	mu     sync.Mutex
	counts map[string]int64
}

// Wrap returns rt counting every request through it. Its signature fits
// rest.Config.Wrap.
func (c *CallCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		if c.counts == nil {
			c.counts = map[string]int64{}
		}
		c.counts[req.Method]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// Total returns the number of requests so far.
func (c *CallCounter) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Counts returns a copy of the counts by HTTP method (GET covers gets,
// lists and discovery; PATCH covers applies and dry runs).
func (c *CallCounter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Reset sets every count to zero.
func (c *CallCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
