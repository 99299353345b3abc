package authority

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestServiceAccountFor follows Argo CD's cases for
// deriveServiceAccountToImpersonate (controller/sync_test.go,
// TestDeriveServiceAccountMatchingNamespaces and ...MatchingServers).
func TestServiceAccountFor(t *testing.T) {
	const local = "https://kubernetes.svc.local"
	type entry = v1alpha1.ApplicationDestinationServiceAccount
	for name, tc := range map[string]struct {
		entries           []entry
		server, namespace string
		// byName gives the destination by name (its server resolved).
		byName  bool
		want    string
		wantErr string
	}{
		"no entries": {
			server: local, namespace: "testns",
			wantErr: "no matching service account found for destination server https://kubernetes.svc.local and namespace testns",
		},
		"exact namespace": {
			entries: []entry{{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa"}},
			server:  local, namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"one match among several namespaces": {
			entries: []entry{
				{Server: local, Namespace: "guestbook", DefaultServiceAccount: "guestbook-sa"},
				{Server: local, Namespace: "guestbook-test", DefaultServiceAccount: "guestbook-test-sa"},
				{Server: local, Namespace: "default", DefaultServiceAccount: "default-sa"},
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa"},
			},
			server: local, namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"one match among several servers": {
			entries: []entry{
				{Server: local, Namespace: "guestbook", DefaultServiceAccount: "guestbook-sa"},
				{Server: "https://abc.svc.local", Namespace: "guestbook", DefaultServiceAccount: "guestbook-test-sa"},
				{Server: "https://cde.svc.local", Namespace: "guestbook", DefaultServiceAccount: "default-sa"},
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa"},
			},
			server: local, namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"first of several matches": {
			entries: []entry{
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa"},
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa-2"},
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa-3"},
			},
			server: local, namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"first match is a glob": {
			entries: []entry{
				{Server: local, Namespace: "test*", DefaultServiceAccount: "test-sa"},
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa-2"},
			},
			server: local, namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"no namespace matches": {
			entries: []entry{
				{Server: local, Namespace: "test1", DefaultServiceAccount: "test-sa"},
				{Server: local, Namespace: "test2", DefaultServiceAccount: "test-sa-2"},
				{Server: local, Namespace: "default", DefaultServiceAccount: "default-sa"},
			},
			server: local, namespace: "testns",
			wantErr: "no matching service account found for destination server https://kubernetes.svc.local and namespace testns",
		},
		"no server matches": {
			entries: []entry{
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa"},
				{Server: "https://abc.svc.local", Namespace: "testns", DefaultServiceAccount: "test-sa-2"},
			},
			server: "https://xyz.svc.local", namespace: "testns",
			wantErr: "no matching service account found for destination server https://xyz.svc.local and namespace testns",
		},
		"catch-all namespace after others": {
			entries: []entry{
				{Server: local, Namespace: "testns1", DefaultServiceAccount: "test-sa-2"},
				{Server: local, Namespace: "default", DefaultServiceAccount: "default-sa"},
				{Server: local, Namespace: "*", DefaultServiceAccount: "test-sa"},
			},
			server: local, namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"catch-all server and namespace": {
			entries: []entry{
				{Server: local, Namespace: "testns1", DefaultServiceAccount: "test-sa-2"},
				{Server: "*", Namespace: "*", DefaultServiceAccount: "test-sa"},
			},
			server: "https://localhost:6443", namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"service account with its namespace": {
			entries: []entry{
				{Server: "https://abc.svc.local", Namespace: "testns", DefaultServiceAccount: "myns:test-sa"},
				{Server: "*", Namespace: "*", DefaultServiceAccount: "test-sa"},
			},
			server: "https://abc.svc.local", namespace: "testns",
			want: "system:serviceaccount:myns:test-sa",
		},
		"destination by name matches its server": {
			entries: []entry{{Server: local, Namespace: "*", DefaultServiceAccount: "test-sa"}},
			server:  local, namespace: "testns", byName: true,
			want: "system:serviceaccount:testns:test-sa",
		},
		"empty namespace glob matches an empty destination namespace": {
			entries: []entry{{Server: local, DefaultServiceAccount: "sa-ns:test-sa"}},
			server:  local,
			want:    "system:serviceaccount:sa-ns:test-sa",
		},
		"empty namespace glob does not match a namespace": {
			entries: []entry{{Server: local, DefaultServiceAccount: "test-sa"}},
			server:  local, namespace: "testns",
			wantErr: "no matching service account found for destination server https://kubernetes.svc.local and namespace testns",
		},
		"plain name without a destination namespace": {
			entries: []entry{{Server: local, Namespace: "*", DefaultServiceAccount: "test-sa"}},
			server:  local,
			wantErr: "default service account 'test-sa' names no namespace and destination https://kubernetes.svc.local has none; write it as namespace:name",
		},
		"invalid namespace glob": {
			entries: []entry{{Server: local, Namespace: "e[[a*", DefaultServiceAccount: "test-sa"}},
			server:  local, namespace: "testns",
			wantErr: "invalid glob pattern for destination namespace: ",
		},
		"invalid server glob": {
			entries: []entry{{Server: "e[[a*", Namespace: "test-ns", DefaultServiceAccount: "test-sa"}},
			server:  local, namespace: "testns",
			wantErr: "invalid glob pattern for destination server: ",
		},
		"empty service account": {
			entries: []entry{{Server: local, Namespace: "testns"}},
			server:  local, namespace: "testns",
			wantErr: "default service account contains invalid chars ''",
		},
		"blank service account": {
			entries: []entry{{Server: local, Namespace: "testns", DefaultServiceAccount: "  "}},
			server:  local, namespace: "testns",
			wantErr: "default service account contains invalid chars '  '",
		},
		"service account with a glob character": {
			entries: []entry{{Server: local, Namespace: "testns", DefaultServiceAccount: "test-*"}},
			server:  local, namespace: "testns",
			wantErr: "default service account contains invalid chars 'test-*'",
		},
		"invalid service account of an entry not reached": {
			entries: []entry{
				{Server: local, Namespace: "testns", DefaultServiceAccount: "test-sa"},
				{Server: local, Namespace: "*", DefaultServiceAccount: "a/b"},
			},
			server: local, namespace: "testns",
			want: "system:serviceaccount:testns:test-sa",
		},
		"negated namespace is refused, not taken literally": {
			entries: []entry{
				{Server: local, Namespace: "!prod", DefaultServiceAccount: "restricted"},
				{Server: local, Namespace: "*", DefaultServiceAccount: "admin"},
			},
			server: local, namespace: "testns",
			wantErr: "namespace has an invalid format, '!prod'",
		},
		"negated server is refused": {
			entries: []entry{{Server: "!" + local, Namespace: "*", DefaultServiceAccount: "test-sa"}},
			server:  "https://other", namespace: "testns",
			wantErr: "server has an invalid format, '!https://kubernetes.svc.local'",
		},
		"negation in a character class is refused too": {
			entries: []entry{{Server: local, Namespace: "team-[!p]*", DefaultServiceAccount: "test-sa"}},
			server:  local, namespace: "team-dev",
			wantErr: "namespace has an invalid format, 'team-[!p]*'",
		},
	} {
		t.Run(name, func(t *testing.T) {
			proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{DestinationServiceAccounts: tc.entries}}
			destName := ""
			if tc.byName {
				destName = "test-cluster"
			}
			got, err := ServiceAccountFor(proj, tc.server, destName, tc.namespace)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if tc.wantErr != "" && strings.HasSuffix(tc.wantErr, ": ") {
				// A glob's own syntax error follows Argo CD's prefix.
				if !strings.HasPrefix(gotErr, tc.wantErr) {
					t.Errorf("error %q, want it to start with %q", gotErr, tc.wantErr)
				}
				gotErr = tc.wantErr
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("user (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServiceAccountForNoMatchIsTyped: a destination no entry matches is a
// *NoServiceAccountError, which a caller can tell from a broken entry.
func TestServiceAccountForNoMatchIsTyped(t *testing.T) {
	_, err := ServiceAccountFor(&v1alpha1.AppProject{}, "https://x", "", "ns")
	var nsa *NoServiceAccountError
	if !errors.As(err, &nsa) {
		t.Fatalf("error %v (%T), want *NoServiceAccountError", err, err)
	}
	if diff := cmp.Diff(&NoServiceAccountError{Server: "https://x", Namespace: "ns"}, nsa); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ServiceAccountFor(&v1alpha1.AppProject{}, "", "prod", "ns"); err == nil || errors.As(err, &nsa) {
		t.Errorf("unresolved destination: error %v, want an error other than no match", err)
	}
}
