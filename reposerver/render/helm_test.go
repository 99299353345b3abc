package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/google/go-cmp/cmp"
)

const helmRoot = "testdata/helm"

// helmDoc summarizes a rendered Helm document.
type helmDoc struct {
	Ref       docRef
	Namespace any
	Replicas  any
	Image     any
	Extra     any
}

func helmDocs(docs []Document) []helmDoc {
	var out []helmDoc
	for i, d := range docs {
		h := helmDoc{Ref: refs(docs[i : i+1])[0], Namespace: fieldAt(d.Object, "metadata.namespace"), Replicas: fieldAt(d.Object, "spec.replicas")}
		switch h.Ref.Kind {
		case "Deployment":
			h.Image = container(d)["image"]
			h.Extra = container(d)["env"]
		case "Job":
			h.Image = container(d)["image"]
		case "Service":
			h.Extra = fieldAt(d.Object, "spec.ports")
		case "StatefulSet":
			vct, _ := fieldAt(d.Object, "spec.volumeClaimTemplates").([]any)
			h.Extra = fieldAt(vct[0].(map[string]any), "spec.resources.requests.storage")
		}
		out = append(out, h)
	}
	return out
}

func TestBuildHelm(t *testing.T) {
	crd := helmDoc{Ref: docRef{File: "app/crds/widgets.yaml", Line: 2, Kind: "CustomResourceDefinition", Name: "widgets.shop.example.com"}}
	sa := func(name string) helmDoc {
		return helmDoc{Ref: docRef{File: "app/templates/service.yaml", Index: 1, Kind: "ServiceAccount", Name: name}}
	}
	svc := func(name string, port any) helmDoc {
		return helmDoc{Ref: docRef{File: "app/templates/service.yaml", Kind: "Service", Name: name},
			Extra: []any{map[string]any{"port": port}}}
	}
	deploy := func(name, ns string, replicas any, image string, env any) helmDoc {
		return helmDoc{Ref: docRef{File: "app/templates/deployment.yaml", Kind: "Deployment", Name: name},
			Namespace: ns, Replicas: replicas, Image: image, Extra: env}
	}
	db := func(name, storage string) helmDoc {
		return helmDoc{Ref: docRef{File: "app/charts/postgres-chart/templates/statefulset.yaml", Kind: "StatefulSet", Name: name},
			Extra: storage}
	}
	hook := func(name, image string) helmDoc {
		return helmDoc{Ref: docRef{File: "app/templates/migrate-hook.yaml", Kind: "Job", Name: name}, Image: image}
	}
	tests := []struct {
		name string
		opts Options
		want []helmDoc
	}{{
		name: "chart defaults",
		want: []helmDoc{
			crd, sa("release-name-shop"), svc("release-name-shop", int64(80)),
			deploy("release-name-shop", "default", int64(1), "nginx:1.25", nil),
			db("release-name-db", "1Gi"), hook("release-name-shop-migrate", "nginx:1.25"),
		},
	}, {
		name: "value file, app name and destination namespace",
		opts: Options{AppName: "shop-prod", Namespace: "shop", Helm: &HelmOptions{ValueFiles: []string{"values-prod.yaml"}}},
		want: []helmDoc{
			crd, sa("shop-prod-shop"), svc("shop-prod-shop", int64(80)),
			deploy("shop-prod-shop", "shop", int64(3), "nginx:1.26", nil),
			db("shop-prod-db", "1Gi"), hook("shop-prod-shop-migrate", "nginx:1.26"),
		},
	}, {
		name: "values then valuesObject then parameters",
		opts: Options{AppName: "ignored", Namespace: "ignored", Helm: &HelmOptions{
			ReleaseName:  "rel",
			Namespace:    "ns",
			ValueFiles:   []string{"values-prod.yaml", "/app/values-prod.yaml"},
			Values:       "replicaCount: 4\nimage:\n  tag: '2.0'\n",
			ValuesObject: map[string]any{"replicaCount": 5, "db": map[string]any{"storage": "5Gi"}},
			Parameters: []HelmParameter{
				{Name: "image.tag", Value: "3.0"},
				{Name: "service.port", Value: "8080"},
				{Name: "extraEnv[0].name", Value: "LIST"},
				{Name: "extraEnv[0].value", Value: "a,b", ForceString: true},
			},
			SkipCrds: true,
		}},
		want: []helmDoc{
			sa("rel-shop"), svc("rel-shop", int64(8080)),
			deploy("rel-shop", "ns", int64(5), "nginx:3.0", []any{map[string]any{"name": "LIST", "value": "a,b"}}),
			db("rel-db", "5Gi"), hook("rel-shop-migrate", "nginx:3.0"),
		},
	}, {
		name: "dependency disabled by condition",
		opts: Options{Helm: &HelmOptions{Parameters: []HelmParameter{{Name: "db.enabled", Value: "false"}}, SkipCrds: true}},
		want: []helmDoc{
			sa("release-name-shop"), svc("release-name-shop", int64(80)),
			deploy("release-name-shop", "default", int64(1), "nginx:1.25", nil),
			hook("release-name-shop-migrate", "nginx:1.25"),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(t.Context(), helmRoot, "app", tt.opts, Limits{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if res.Kind != KindHelm {
				t.Errorf("Kind = %q, want %q", res.Kind, KindHelm)
			}
			if diff := cmp.Diff(tt.want, helmDocs(res.Documents)); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
			for _, d := range res.Documents {
				if !d.Rendered || d.Origin != KindHelm {
					t.Errorf("%s: Rendered=%v Origin=%q", d.File, d.Rendered, d.Origin)
				}
			}
			if len(res.Notes) != 0 {
				t.Errorf("notes: %v", res.Notes)
			}
		})
	}
}

func TestBuildHelmErrors(t *testing.T) {
	tests := []struct {
		name    string
		dir     string
		opts    Options
		wantIs  error
		wantMsg string
	}{{
		name:    "template error names file and line",
		dir:     "template-error",
		wantMsg: `render helm template-error: template: broken/templates/configmap.yaml:6:19: executing "broken/templates/configmap.yaml" at <.Values.logging.level>: nil pointer evaluating interface {}.level`,
	}, {
		name:    "missing dependency",
		dir:     "missing-dependency",
		wantIs:  ErrMissingDependency,
		wantMsg: "render helm missing-dependency: missing chart dependency: redis listed in Chart.yaml but not found in charts/",
	}, {
		name:    "missing value file",
		dir:     "app",
		opts:    Options{Helm: &HelmOptions{ValueFiles: []string{"values-staging.yaml"}}},
		wantIs:  fs.ErrNotExist,
		wantMsg: "render helm app: read value file values-staging.yaml: file does not exist",
	}, {
		name:    "value file outside the repository",
		dir:     "app",
		opts:    Options{Helm: &HelmOptions{ValueFiles: []string{"../../../../../etc/passwd"}}},
		wantIs:  ErrOutsideRoot,
		wantMsg: "render helm app: read value file ../../../../../etc/passwd: outside the repository root",
	}, {
		name:    "remote value file",
		dir:     "app",
		opts:    Options{Helm: &HelmOptions{ValueFiles: []string{"https://example.com/values.yaml"}}},
		wantIs:  ErrRemoteReference,
		wantMsg: `render helm app: read value file "https://example.com/values.yaml": remote references are not allowed`,
	}, {
		name:    "bad parameter",
		dir:     "app",
		opts:    Options{Helm: &HelmOptions{Parameters: []HelmParameter{{Name: "list[x", Value: "1"}}}},
		wantMsg: `render helm app: parse helm parameter "list[x": `,
	}, {
		name:    "bad values",
		dir:     "app",
		opts:    Options{Helm: &HelmOptions{Values: "replicaCount: [1"}},
		wantMsg: "render helm app: parse helm values: ",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(t.Context(), helmRoot, tt.dir, tt.opts, Limits{})
			if err == nil {
				t.Fatal("Build succeeded")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			if !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("error:\n got %s\nwant prefix %s", err, tt.wantMsg)
			}
		})
	}
}

func TestBuildHelmSymlinkEscape(t *testing.T) {
	outside := t.TempDir()
	mustWrite(t, outside, "secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n")
	root := t.TempDir()
	mustWrite(t, root, "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	mustSymlink(t, filepath.Join(outside, "secret.yaml"), filepath.Join(root, "chart/templates/secret.yaml"))
	_, err := Build(t.Context(), root, "chart", Options{}, Limits{})
	if !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("error = %v, want ErrOutsideRoot", err)
	}
	if want := "render helm chart: read chart file chart/templates/secret.yaml: symlink target is outside the repository root"; err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
}

// TestBuildHelmPackagedSubchart checks the mapping of template paths to
// repository files for an aliased subchart packaged as an archive.
func TestBuildHelmPackagedSubchart(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "deploy/chart/Chart.yaml",
		"apiVersion: v2\nname: top\nversion: 0.1.0\ndependencies:\n  - name: cache\n    version: 1.0.0\n    alias: memo\n")
	mustWrite(t, root, "deploy/chart/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n")
	mustWrite(t, root, "deploy/chart/charts/cache-1.0.0.tgz", string(tgz(t, map[string]string{
		"cache/Chart.yaml":           "apiVersion: v2\nname: cache\nversion: 1.0.0\n",
		"cache/templates/cache.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}\n",
	})))
	res, err := Build(t.Context(), root, "deploy/chart", Options{}, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []docRef{
		{File: "deploy/chart/charts/cache-1.0.0.tgz", Kind: "ConfigMap", Name: "memo"},
		{File: "deploy/chart/templates/cm.yaml", Kind: "ConfigMap", Name: "top"},
	}
	if diff := cmp.Diff(want, refs(res.Documents)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
}

// TestBuildHelmFetchedDependencies renders a chart with dependencies it does
// not vendor, as the repo-server passes them: an archive from its chart
// cache and a file:// chart directory of the repository.
func TestBuildHelmFetchedDependencies(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "deploy/chart/Chart.yaml", "apiVersion: v2\nname: top\nversion: 0.1.0\ndependencies:\n"+
		"  - {name: cache, version: 1.0.0, repository: https://charts.example.com}\n  - {name: lib, version: 0.1.0, repository: file://../lib}\n")
	mustWrite(t, root, "deploy/lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 0.1.0\n")
	mustWrite(t, root, "deploy/lib/templates/lib.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lib\n")
	archive := filepath.Join(t.TempDir(), "cache-1.0.0.tgz")
	if err := os.WriteFile(archive, tgz(t, map[string]string{
		"cache/Chart.yaml":           "apiVersion: v2\nname: cache\nversion: 1.0.0\n",
		"cache/templates/cache.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}\n",
	}), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(t.Context(), root, "deploy/chart", Options{}, Limits{}); !errors.Is(err, ErrMissingDependency) {
		t.Fatalf("without the fetched dependencies: err = %v, want ErrMissingDependency", err)
	}
	opts := Options{ChartDependencies: []ChartDependency{{Name: "cache", Archive: archive}, {Name: "lib", Dir: "deploy/lib"}}}
	res, err := Build(t.Context(), root, "deploy/chart", opts, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	var names []string
	for _, d := range res.Documents {
		names = append(names, d.Object["metadata"].(map[string]any)["name"].(string))
	}
	if slices.Sort(names); !slices.Equal(names, []string{"cache", "lib"}) {
		t.Errorf("rendered %v, want cache and lib", names)
	}
	opts.ChartDependencies[1].Dir = "../outside"
	if _, err := Build(t.Context(), root, "deploy/chart", opts, Limits{}); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("a file:// dependency outside the repository: err = %v, want ErrOutsideRoot", err)
	}
}

func tgz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBuildHelmCapabilities renders a chart that branches on
// .Capabilities against the defaults and against a cluster's version and
// API versions, as `helm template --kube-version --api-versions` would.
func TestBuildHelmCapabilities(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	mustWrite(t, root, "chart/templates/cm.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
data:
  minor: {{ .Capabilities.KubeVersion.Minor | quote }}
  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" | quote }}
`)
	tests := []struct {
		name string
		caps *Capabilities
		want map[string]any
	}{
		{name: "defaults", want: map[string]any{"minor": chartutilDefaultMinor(), "monitoring": "false"}},
		{name: "cluster's", caps: &Capabilities{KubeVersion: "1.29.3", APIVersions: []string{"monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"}},
			want: map[string]any{"minor": "29", "monitoring": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(t.Context(), root, "chart", Options{Capabilities: tt.caps}, Limits{})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tt.want, res.Documents[0].Object["data"]); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

func chartutilDefaultMinor() string { return chartutil.DefaultCapabilities.KubeVersion.Minor }

// TestBuildHelmArgoOptions renders Argo CD's fileParameters (`--set-file`,
// after parameters), skipTests and skipSchemaValidation.
func TestBuildHelmArgoOptions(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	mustWrite(t, root, "chart/values.schema.json", `{"type": "object", "properties": {"replicas": {"type": "integer"}}}`)
	mustWrite(t, root, "chart/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  config: {{ .Values.config | quote }}\n  replicas: {{ .Values.replicas | quote }}\n")
	mustWrite(t, root, "chart/templates/test.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: smoke\n  annotations: {helm.sh/hook: test}\nspec: {containers: [{name: t, image: busybox:1.36}]}\n")
	mustWrite(t, root, "config/app.conf", "listen 8080\nworkers 4\n")
	opts := func(h HelmOptions) Options { return Options{Helm: &h} }
	res, err := Build(t.Context(), root, "chart", opts(HelmOptions{
		Parameters:     []HelmParameter{{Name: "config", Value: "overridden"}, {Name: "replicas", Value: "2"}},
		FileParameters: []HelmFileParameter{{Name: "config", Path: "/config/app.conf"}},
		SkipTests:      true,
	}), Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []docRef{{File: "chart/templates/cm.yaml", Kind: "ConfigMap", Name: "cfg"}}
	if diff := cmp.Diff(want, refs(res.Documents)); diff != "" {
		t.Errorf("documents without the test hook (-want +got):\n%s", diff)
	}
	if got := res.Documents[0].Object["data"].(map[string]any)["config"]; got != "listen 8080\nworkers 4\n" {
		t.Errorf("config = %q, want the file's content", got)
	}
	res, err = Build(t.Context(), root, "chart", opts(HelmOptions{}), Limits{})
	if err != nil || len(res.Documents) != 2 {
		t.Errorf("without skipTests: %d documents, %v; want the test hook too", len(res.Documents), err)
	}
	bad := HelmOptions{Parameters: []HelmParameter{{Name: "replicas", Value: "two", ForceString: true}}}
	if _, err := Build(t.Context(), root, "chart", opts(bad), Limits{}); err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
		t.Errorf("schema violation: error = %v, want Helm's schema error", err)
	}
	bad.SkipSchemaValidation = true
	if _, err := Build(t.Context(), root, "chart", opts(bad), Limits{}); err != nil {
		t.Errorf("skipSchemaValidation: %v", err)
	}
	outside := HelmOptions{FileParameters: []HelmFileParameter{{Name: "x", Path: "../../etc/passwd"}}}
	if _, err := Build(t.Context(), root, "chart", opts(outside), Limits{}); err == nil || !strings.Contains(err.Error(), "read file parameter ../../etc/passwd: outside the repository root") {
		t.Errorf("file parameter outside the repository: error = %v", err)
	}
}
