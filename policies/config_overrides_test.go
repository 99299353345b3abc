package policies

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadConfigWith(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	named := write("named.yaml", "argocdNamespace: gitops\ntollgateNamespace: guard\n")
	tracked := write("tracked.yaml", "trackingMethod: label\n")
	unnamed := write("unnamed.yaml", "rules:\n  no-latest-tag: warn\n")
	warn := RuleSeverities{"no-latest-tag": SeverityWarn}
	tests := []struct {
		name string
		path string
		o    ConfigOverrides
		want Config
	}{
		{name: "no file, nothing set", want: Config{}},
		{
			name: "no file, override and fallbacks",
			o:    ConfigOverrides{ArgoCDNamespace: "cd", FallbackArgoCDNamespace: "other", FallbackTollgateNamespace: "tg"},
			want: Config{ArgoCDNamespace: "cd", TollgateNamespace: "tg"},
		},
		{
			name: "no file, fallbacks",
			o:    ConfigOverrides{FallbackArgoCDNamespace: "cd", FallbackTollgateNamespace: "tg"},
			want: Config{ArgoCDNamespace: "cd", TollgateNamespace: "tg"},
		},
		{
			name: "file names both: fallbacks do not apply",
			path: named,
			o:    ConfigOverrides{FallbackArgoCDNamespace: "cd", FallbackTollgateNamespace: "tg"},
			want: Config{ArgoCDNamespace: "gitops", TollgateNamespace: "guard", source: named},
		},
		{
			name: "override replaces the file",
			path: named,
			o:    ConfigOverrides{ArgoCDNamespace: "cd"},
			want: Config{ArgoCDNamespace: "cd", TollgateNamespace: "guard", source: named},
		},
		{
			name: "tracking method replaces the file's",
			path: tracked,
			o:    ConfigOverrides{TrackingMethod: TrackingAnnotationAndLabel},
			want: Config{TrackingMethod: TrackingAnnotationAndLabel, source: tracked},
		},
		{
			name: "file's tracking method without an override",
			path: tracked,
			want: Config{TrackingMethod: TrackingLabel, source: tracked},
		},
		{
			name: "file names neither: fallbacks apply",
			path: unnamed,
			o:    ConfigOverrides{FallbackArgoCDNamespace: "cd", FallbackTollgateNamespace: "tg"},
			want: Config{ArgoCDNamespace: "cd", TollgateNamespace: "tg", Rules: warn, source: unnamed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadConfigWith(tt.path, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Config{})); diff != "" {
				t.Errorf("LoadConfigWith() (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("file error", func(t *testing.T) {
		missing := filepath.Join(dir, "missing.yaml")
		_, err := LoadConfigWith(missing, ConfigOverrides{ArgoCDNamespace: "cd"})
		if _, want := LoadConfig(missing); err == nil || err.Error() != want.Error() {
			t.Errorf("LoadConfigWith() error = %v, want LoadConfig's %v", err, want)
		}
	})
}
