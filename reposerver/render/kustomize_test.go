package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// field returns the value at a dotted path in obj ("metadata.labels.env"),
// or nil.
func fieldAt(obj map[string]any, path string) any {
	var cur any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func container(d Document) map[string]any {
	cs, _ := fieldAt(d.Object, "spec.template.spec.containers").([]any)
	if len(cs) == 0 {
		return nil
	}
	c, _ := cs[0].(map[string]any)
	return c
}

const kustomizeRoot = "testdata/kustomize"

func TestBuildKustomizeOverlay(t *testing.T) {
	res, err := Build(t.Context(), kustomizeRoot, "overlays/prod", Options{}, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if res.Kind != KindKustomize {
		t.Errorf("Kind = %q, want %q", res.Kind, KindKustomize)
	}
	want := []docRef{
		{File: "base/service.yaml", Index: 0, Line: 2, Kind: "ConfigMap", Name: "prod-web-settings"},
		{File: "overlays/prod/kustomization.yaml", Index: 0, Line: 11, Kind: "Secret", Name: "prod-db-creds-25k92892fb"},
		{File: "base/service.yaml", Index: 1, Line: 9, Kind: "Service", Name: "prod-web"},
		{File: "base/deployment.yaml", Index: 0, Line: 1, Kind: "Deployment", Name: "prod-web"},
	}
	if diff := cmp.Diff(want, refs(res.Documents)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	for _, d := range res.Documents {
		if !d.Rendered || d.Origin != KindKustomize {
			t.Errorf("%s: Rendered=%v Origin=%q, want true %q", d.File, d.Rendered, d.Origin, KindKustomize)
		}
		if got := fieldAt(d.Object, "metadata.labels.env"); got != "prod" {
			t.Errorf("%s: label env = %v, want prod", d.File, got)
		}
		// Origin annotations are ours, not the user's: none is left, and
		// no empty annotations map either.
		if _, ok := fieldAt(d.Object, "metadata").(map[string]any)["annotations"]; ok {
			t.Errorf("%s: annotations left in output: %v", d.File, fieldAt(d.Object, "metadata.annotations"))
		}
		if got := d.LineOf([]any{"spec", "replicas"}); got != d.Line {
			t.Errorf("%s: LineOf on a rendered document = %d, want its Line %d", d.File, got, d.Line)
		}
	}
	dep := res.Documents[3]
	wantContainer := map[string]any{
		"name":    "web",
		"image":   "nginx:1.26",
		"envFrom": []any{map[string]any{"secretRef": map[string]any{"name": "prod-db-creds-25k92892fb"}}},
	}
	if diff := cmp.Diff(wantContainer, container(dep)); diff != "" {
		t.Errorf("container (-want +got):\n%s", diff)
	}
	if got := fieldAt(dep.Object, "spec.replicas"); got != int64(2) {
		t.Errorf("replicas = %#v, want int64(2)", got)
	}
}

func TestBuildKustomizeOptions(t *testing.T) {
	kustFile := filepath.Join(kustomizeRoot, "overlays/prod/kustomization.yaml")
	before, err := os.ReadFile(kustFile)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Kustomize: &KustomizeOptions{
		Images:            []string{"nginx=registry.example.com/mirror/nginx:1.27"},
		NamePrefix:        "argo-",
		NameSuffix:        "-v2",
		Namespace:         "shop",
		CommonLabels:      map[string]string{"team": "payments", "env": "staging"},
		ForceCommonLabels: true,
		CommonAnnotations: map[string]string{"owner": "payments@example.com", "enabled": "true"},
	}}
	res, err := Build(t.Context(), kustomizeRoot, "overlays/prod", opts, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	type summary struct {
		Kind, Name, Namespace string
		Labels, Annotations   any
		Image                 any
	}
	var got []summary
	for _, d := range res.Documents {
		s := summary{
			Kind:        d.Object["kind"].(string),
			Name:        fieldAt(d.Object, "metadata.name").(string),
			Namespace:   fieldAt(d.Object, "metadata.namespace").(string),
			Labels:      fieldAt(d.Object, "metadata.labels"),
			Annotations: fieldAt(d.Object, "metadata.annotations"),
		}
		if c := container(d); c != nil {
			s.Image = c["image"]
		}
		got = append(got, s)
	}
	labels := map[string]any{"env": "staging", "team": "payments"}
	annotations := map[string]any{"owner": "payments@example.com", "enabled": "true"}
	want := []summary{
		{Kind: "ConfigMap", Name: "argo-web-settings-v2", Namespace: "shop", Labels: labels, Annotations: annotations},
		{Kind: "Secret", Name: "argo-db-creds-v2-25k92892fb", Namespace: "shop", Labels: labels, Annotations: annotations},
		{Kind: "Service", Name: "argo-web-v2", Namespace: "shop", Labels: labels, Annotations: annotations},
		{Kind: "Deployment", Name: "argo-web-v2", Namespace: "shop", Labels: labels, Annotations: annotations,
			Image: "registry.example.com/mirror/nginx:1.27"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered objects (-want +got):\n%s", diff)
	}
	after, err := os.ReadFile(kustFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("Build changed %s:\n%s", kustFile, after)
	}
}

// TestBuildKustomizeArgoOptions renders the options Argo CD adds to
// kustomize edit's: replicas, patches (strategic merge and JSON 6902, with
// targets), components (a missing one ignored), and labels that leave
// selectors alone.
func TestBuildKustomizeArgoOptions(t *testing.T) {
	opts := Options{Kustomize: &KustomizeOptions{
		Replicas: []KustomizeReplica{{Name: "web", Count: 5}},
		Patches: []KustomizePatch{
			{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: redis:latest\n"},
			{Patch: "- op: replace\n  path: /spec/ports/0/port\n  value: 8080\n", Target: &KustomizeTarget{Kind: "Service", Name: "web"}},
		},
		Components:              []string{"../../components/debug", "../../components/missing"},
		IgnoreMissingComponents: true,
		CommonLabels:            map[string]string{"tier": "backend"},
		LabelWithoutSelector:    true,
		LabelIncludeTemplates:   true,
	}}
	res, err := Build(t.Context(), kustomizeRoot, "overlays/prod", opts, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	byKind := map[string]Document{}
	for _, d := range res.Documents {
		byKind[d.Object["kind"].(string)] = d
	}
	dep, svc := byKind["Deployment"].Object, byKind["Service"].Object
	got := map[string]any{
		"replicas":         fieldAt(dep, "spec.replicas"),
		"image":            container(byKind["Deployment"])["image"],
		"port":             fieldAt(svc, "spec.ports").([]any)[0].(map[string]any)["port"],
		"debug annotation": fieldAt(dep, "metadata.annotations.debug"),
		"label":            fieldAt(dep, "metadata.labels.tier"),
		"template label":   fieldAt(dep, "spec.template.metadata.labels.tier"),
		"selector":         fieldAt(dep, "spec.selector.matchLabels"),
		"service selector": fieldAt(svc, "spec.selector"),
	}
	want := map[string]any{
		"replicas":         int64(5),
		"image":            "redis:latest",
		"port":             int64(8080),
		"debug annotation": "on",
		"label":            "backend",
		"template label":   "backend",
		"selector":         map[string]any{"app": "web", "env": "prod"},
		"service selector": map[string]any{"app": "web", "env": "prod"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered fields (-want +got):\n%s", diff)
	}
}

// TestBuildKustomizeOptionErrors holds the errors kustomize edit (and so
// Argo CD) gives.
func TestBuildKustomizeOptionErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    KustomizeOptions
		wantErr string
	}{
		{
			name:    "label already in the kustomization without force",
			opts:    KustomizeOptions{CommonLabels: map[string]string{"env": "staging"}},
			wantErr: "edit kustomization: label env already in kustomization file (set forceCommonLabels to overwrite it)",
		},
		{
			name:    "missing component",
			opts:    KustomizeOptions{Components: []string{"../../components/missing"}},
			wantErr: "component ../../components/missing has no match in the repository",
		},
		{
			name:    "component outside the repository",
			opts:    KustomizeOptions{Components: []string{"../../../../../../etc"}},
			wantErr: "component ../../../../../../etc has no match in the repository",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(t.Context(), kustomizeRoot, "overlays/prod", Options{Kustomize: &tt.opts}, Limits{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	patch := &KustomizeOptions{Patches: []KustomizePatch{{Patch: "x"}}}
	if _, _, err := editKustomization([]byte("patches: {a: b}\n"), patch, nil); err == nil || err.Error() != "edit kustomization: patches is not a list" {
		t.Errorf("error = %v, want %q", err, "edit kustomization: patches is not a list")
	}
}

func TestBuildKustomizeRejected(t *testing.T) {
	tests := []struct {
		dir     string
		wantIs  error
		wantMsg string
	}{{
		dir:     "escape-rejected",
		wantIs:  ErrOutsideRoot,
		wantMsg: "render kustomize escape-rejected: ../../..: outside the repository root",
	}, {
		dir:     "remote-url-rejected",
		wantIs:  ErrRemoteReference,
		wantMsg: `render kustomize remote-url-rejected: remote-url-rejected/kustomization.yaml line 3: resources entry "https://raw.githubusercontent.com/example/manifests/main/deploy.yaml": remote references are not allowed`,
	}, {
		dir:     "remote-git-rejected",
		wantIs:  ErrRemoteReference,
		wantMsg: `render kustomize remote-git-rejected: remote-git-rejected/kustomization.yaml line 2: resources entry "github.com/example/manifests//deploy?ref=v1.0.0": remote references are not allowed`,
	}, {
		dir:     "helmcharts-rejected",
		wantIs:  errHelmNotEnabled,
		wantMsg: "render kustomize helmcharts-rejected: helmcharts-rejected/kustomization.yaml line 1: helmCharts need --enable-helm in argocd-cm kustomize.buildOptions",
	}, {
		dir:     "../..",
		wantIs:  ErrOutsideRoot,
		wantMsg: "render ../..: outside the repository root",
	}}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			_, err := Build(t.Context(), kustomizeRoot, tt.dir, Options{}, Limits{})
			if err == nil {
				t.Fatal("Build succeeded")
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			if !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("error:\n got %s\nwant prefix %s", err, tt.wantMsg)
			}
		})
	}
}

func TestBuildKustomizeSymlinkEscape(t *testing.T) {
	outside := t.TempDir()
	mustWrite(t, outside, "stolen.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\n")
	mustWrite(t, outside, "base/kustomization.yaml", "resources:\n  - ../stolen.yaml\n")
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
	}{{
		name: "symlinked resource file",
		setup: func(t *testing.T, root string) {
			mustWrite(t, root, "app/kustomization.yaml", "resources:\n  - cm.yaml\n")
			mustSymlink(t, filepath.Join(outside, "stolen.yaml"), filepath.Join(root, "app/cm.yaml"))
		},
	}, {
		name: "symlinked base directory",
		setup: func(t *testing.T, root string) {
			mustWrite(t, root, "app/kustomization.yaml", "resources:\n  - base\n")
			mustSymlink(t, filepath.Join(outside, "base"), filepath.Join(root, "app/base"))
		},
	}, {
		name: "symlinked kustomization file",
		setup: func(t *testing.T, root string) {
			mustSymlink(t, filepath.Join(outside, "base/kustomization.yaml"), filepath.Join(root, "app/kustomization.yaml"))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.setup(t, root)
			res, err := Build(t.Context(), root, "app", Options{}, Limits{})
			if err == nil {
				t.Fatalf("Build succeeded with %d documents", len(res.Documents))
			}
			if !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("error %v is not ErrOutsideRoot", err)
			}
			if strings.Contains(err.Error(), outside) || strings.Contains(err.Error(), root) {
				t.Errorf("error names absolute paths: %v", err)
			}
		})
	}
}

func TestEditKustomizationImages(t *testing.T) {
	const base = "images:\n- name: nginx\n  newName: mirror/nginx\n  newTag: \"1.0\"\n- name: redis\n  newTag: \"7\"\n  tagSuffix: keep\n"
	type images = []map[string]string
	nginx := map[string]string{"name": "nginx", "newName": "mirror/nginx", "newTag": "1.0"}
	redis := map[string]string{"name": "redis", "newTag": "7", "tagSuffix": "keep"}
	tests := []struct {
		name    string
		images  []string
		want    images
		wantErr string
	}{{
		name:   "tag only replaces the entry",
		images: []string{"nginx:1.27"},
		want:   images{{"name": "nginx", "newTag": "1.27"}, redis},
	}, {
		name:   "star keeps the current new name",
		images: []string{"nginx=*:1.27"},
		want:   images{{"name": "nginx", "newName": "mirror/nginx", "newTag": "1.27"}, redis},
	}, {
		name:   "new name and digest, new entry sorted by name",
		images: []string{"alpine=registry.example.com:5000/alpine@sha256:abc"},
		want:   images{{"name": "alpine", "newName": "registry.example.com:5000/alpine", "digest": "sha256:abc"}, nginx, redis},
	}, {
		name:   "registry port is not a tag",
		images: []string{"localhost:5000/app:2.0"},
		want:   images{{"name": "localhost:5000/app", "newTag": "2.0"}, nginx, redis},
	}, {
		name:   "new name only",
		images: []string{"redis=valkey/valkey"},
		want:   images{nginx, {"name": "redis", "newName": "valkey/valkey"}},
	}, {
		name:    "bare name is invalid",
		images:  []string{"nginx"},
		wantErr: `edit kustomization: image "nginx": invalid image`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, added, err := editKustomization([]byte(base), &KustomizeOptions{Images: tt.images}, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Images        images   `yaml:"images"`
				BuildMetadata []string `yaml:"buildMetadata"`
			}
			if err := yaml.Unmarshal(out, &got); err != nil {
				t.Fatalf("edited kustomization does not parse: %v\n%s", err, out)
			}
			if diff := cmp.Diff(tt.want, got.Images); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
			if !added || !cmp.Equal(got.BuildMetadata, []string{"originAnnotations"}) {
				t.Errorf("buildMetadata = %v (added %v), want [originAnnotations] added", got.BuildMetadata, added)
			}
		})
	}
}

func TestEditKustomizationKeepsUserOriginAnnotations(t *testing.T) {
	out, added, err := editKustomization([]byte("buildMetadata: [originAnnotations]\nresources: [a.yaml]\n"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if added {
		t.Errorf("originAnnotations reported as added to a kustomization that asks for them:\n%s", out)
	}
}

func TestIsRemote(t *testing.T) {
	tests := []struct {
		ref        string
		localFile  bool
		wantRemote bool
	}{
		{"https://example.com/deploy.yaml", false, true},
		{"HTTP://example.com/deploy.yaml", false, true},
		{"ssh://git@example.com/org/repo", false, true},
		{"file:///srv/repo", false, true},
		{"git::https://example.com/org/repo", false, true},
		{"github.com/org/repo//path?ref=v1", false, true},
		{"GitHub.com:org/repo", false, true},
		{"git@gitlab.example.com:org/repo.git", false, true},
		{"git@gitlab.example.com:org/repo.git", true, false},
		{"../base", false, false},
		{"deployment.yaml", false, false},
		{"gitlab.example.com/org/repo", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			if got := isRemote(tt.ref, func() bool { return tt.localFile }); got != tt.wantRemote {
				t.Errorf("isRemote(%q, local file %v) = %v, want %v", tt.ref, tt.localFile, got, tt.wantRemote)
			}
		})
	}
}

func TestServeKustomizationRefused(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "app/local.yaml", "apiVersion: v1\nkind: ConfigMap\n")
	r, err := openRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := newConfinedFS(r, nil, DefaultMaxFileBytes, nil)
	if err != nil {
		t.Fatal(err)
	}
	kust := filepath.Join(r.root, "app/kustomization.yaml")
	tests := []struct {
		name    string
		content string
		wantMsg string
	}{
		{"local paths", "resources: [local.yaml, ../base]\npatches:\n- path: p.yaml\nconfigMapGenerator:\n- name: c\n  files: [k=local.yaml]\n", ""},
		{"inline patch mentioning a URL", "patchesStrategicMerge:\n- |\n  metadata:\n    annotations:\n      docs: https://example.com\n", ""},
		{"component", "components:\n- github.com/org/components/monitoring\n", `app/kustomization.yaml line 2: components entry "github.com/org/components/monitoring"`},
		{"patch path", "patches:\n- path: https://example.com/p.yaml\n", `app/kustomization.yaml line 2: patches.path entry "https://example.com/p.yaml"`},
		{"generator file with key", "secretGenerator:\n- name: s\n  files:\n  - tls.crt=https://example.com/tls.crt\n", `app/kustomization.yaml line 4: secretGenerator.files entry "https://example.com/tls.crt"`},
		{"generator env", "configMapGenerator:\n- name: c\n  env: http://example.com/.env\n", `app/kustomization.yaml line 3: configMapGenerator.env entry "http://example.com/.env"`},
		{"openapi", "openapi:\n  path: https://example.com/schema.json\n", `app/kustomization.yaml line 2: openapi.path entry "https://example.com/schema.json"`},
		{"transformer", "transformers:\n- git::https://example.com/t.git\n", `app/kustomization.yaml line 2: transformers entry "git::https://example.com/t.git"`},
		{"not yaml is left to kustomize", "resources: [\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serveKustomization(fsys, kust, []byte(tt.content))
			if tt.wantMsg == "" {
				if err != nil {
					t.Errorf("serveKustomization: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrRemoteReference) || !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("error:\n got %v\nwant prefix %s (wrapping ErrRemoteReference)", err, tt.wantMsg)
			}
		})
	}
}
