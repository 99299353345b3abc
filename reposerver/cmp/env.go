package cmp

import "strings"

// envEntries turns NAME=VALUE strings into the metadata's entries, leaving
// out those without "=", as Argo CD's repo-server does.
func envEntries(env []string) []envEntry {
	out := make([]envEntry, 0, len(env))
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		out = append(out, envEntry{Name: name, Value: value})
	}
	return out
}

// commandEnv is the environment a plugin's command runs with: the
// sidecar's own, then the request's entries (those with a name), which
// win where a name repeats, as in argocd-cmp-server.
func commandEnv(sidecar []string, entries []envEntry) []string {
	out := make([]string, 0, len(sidecar)+len(entries))
	out = append(out, sidecar...)
	for _, e := range entries {
		if e.Name != "" {
			out = append(out, e.Name+"="+e.Value)
		}
	}
	return out
}
