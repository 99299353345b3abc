package objdiff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHideSecretData(t *testing.T) {
	secret := func(data map[string]any, extra map[string]any) map[string]any {
		s := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db"}}
		if data != nil {
			s["data"] = data
		}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	tests := []struct {
		name                 string
		live, target         map[string]any
		wantLive, wantTarget map[string]any
	}{
		{
			name:       "equal values share a mask, a changed one gets a longer one",
			live:       secret(map[string]any{"user": "YWRtaW4=", "password": "b2xk"}, nil),
			target:     secret(map[string]any{"user": "YWRtaW4=", "password": "bmV3", "token": "dA=="}, nil),
			wantLive:   secret(map[string]any{"user": "++++++++", "password": "++++++++"}, nil),
			wantTarget: secret(map[string]any{"user": "++++++++", "password": "+++++++++", "token": "++++++++"}, nil),
		},
		{
			name:       "stringData of a Secret not yet applied, equal to the live data",
			live:       secret(map[string]any{"password": "czNjcjN0"}, nil),
			target:     secret(nil, map[string]any{"stringData": map[string]any{"password": "s3cr3t"}}),
			wantLive:   secret(map[string]any{"password": "++++++++"}, nil),
			wantTarget: secret(map[string]any{"password": "++++++++"}, nil),
		},
		{
			name: "last-applied-configuration dropped, other annotations kept",
			live: map[string]any{"kind": "Secret", "metadata": map[string]any{"annotations": map[string]any{
				lastAppliedAnnotation: `{"data":{"password":"czNjcjN0"}}`, "team": "db",
			}}},
			wantLive: map[string]any{"kind": "Secret", "metadata": map[string]any{"annotations": map[string]any{"team": "db"}}},
		},
		{
			name:     "a Secret to prune",
			live:     secret(map[string]any{"password": "czNjcjN0"}, map[string]any{"metadata": map[string]any{"annotations": map[string]any{lastAppliedAnnotation: "{}"}}}),
			wantLive: secret(map[string]any{"password": "++++++++"}, map[string]any{"metadata": map[string]any{}}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			HideSecretData(tc.live, tc.target)
			if diff := cmp.Diff(tc.wantLive, tc.live); diff != "" {
				t.Errorf("live (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTarget, tc.target); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
		})
	}
}
