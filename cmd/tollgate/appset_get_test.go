package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// fakeAppSetClient is a fake client holding sets.
func fakeAppSetClient(t *testing.T, sets ...*v1alpha1.ApplicationSet) client.Client {
	t.Helper()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, s := range sets {
		b = b.WithObjects(s)
	}
	return b.Build()
}

// testAppSets are a single-source ApplicationSet with Helm parameters, a
// sync policy and conditions, and a multi-source one in another namespace.
func testAppSets() []*v1alpha1.ApplicationSet {
	at := metav1.NewTime(time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC))
	createOnly := v1alpha1.ApplicationsSyncPolicyCreateOnly
	guestbook := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: "argocd", Labels: map[string]string{"team": "web"}}}
	guestbook.Spec.Template.Spec = v1alpha1.ApplicationSpec{
		Project: "team-web",
		Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/config.git", TargetRevision: "main", Path: "apps/guestbook",
			Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values.yaml", "prod.yaml"}, Parameters: []v1alpha1.HelmParameter{
				{Name: "image.tag", Value: "1.2.3"}, {Name: "long", Value: strings.Repeat("x", 90)}}}},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{name}}"},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
	}
	guestbook.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{ApplicationsSync: &createOnly}
	guestbook.Status.Conditions = []v1alpha1.ApplicationSetCondition{
		{Type: v1alpha1.ApplicationSetConditionResourcesUpToDate, Status: v1alpha1.ApplicationSetConditionStatusTrue, Message: "All applications have been generated successfully", Reason: "ApplicationSetUpToDate", LastTransitionTime: &at},
		{Type: v1alpha1.ApplicationSetConditionErrorOccurred, Status: "False", Message: "Successfully generated parameters for all Applications", Reason: "ApplicationSetUpToDate", LastTransitionTime: &at},
	}
	previews := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "previews", Namespace: "team-a"}}
	previews.Spec.Template.Spec = v1alpha1.ApplicationSpec{
		Sources: []v1alpha1.ApplicationSource{
			{RepoURL: "https://git.example.com/web.git", TargetRevision: "{{branch}}", Path: "deploy"},
			{RepoURL: "https://git.example.com/values.git", TargetRevision: "main", Ref: "values"},
		},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: "preview-{{number}}"},
	}
	return []*v1alpha1.ApplicationSet{guestbook, previews}
}

func TestAppSetGet(t *testing.T) {
	for _, tc := range []struct {
		name, set string
		opts      appSetGetOptions
		golden    string
		wantErr   string
	}{
		{name: "wide with params", set: "guestbook", opts: appSetGetOptions{output: "wide", showParams: true}, golden: "appset-get-guestbook.golden"},
		{name: "multi-source by qualified name", set: "team-a/previews", opts: appSetGetOptions{output: "wide"}, golden: "appset-get-previews.golden"},
		{name: "multi-source by -N", set: "previews", opts: appSetGetOptions{output: "wide", appSetTarget: appSetTarget{appSetNamespace: "team-a"}}, golden: "appset-get-previews.golden"},
		{name: "missing", set: "nope", opts: appSetGetOptions{output: "wide"}, wantErr: "applicationset nope not found in namespace argocd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppSetClient(t, testAppSets()...)
			tc.opts.namespace = "argocd"
			var out bytes.Buffer
			err := getAppSet(t.Context(), &out, c, tc.opts.key(tc.set), tc.opts)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q (exit 2)", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.golden, out.String())
		})
	}
}

// TestAppSetGetYAML: -o yaml is the object as stored, without managedFields.
func TestAppSetGetYAML(t *testing.T) {
	c := fakeAppSetClient(t, testAppSets()...)
	var out bytes.Buffer
	o := appSetGetOptions{appSetTarget: appSetTarget{namespace: "argocd"}, output: "yaml"}
	if err := getAppSet(t.Context(), &out, c, o.key("guestbook"), o); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict(out.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, out.String())
	}
	if got.ManagedFields != nil {
		t.Errorf("managedFields printed: %v", got.ManagedFields)
	}
	if diff := cmp.Diff(testAppSets()[0].Spec, got.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestAppSetList(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    appSetListOptions
		golden  string
		want    string
		wantErr string
	}{
		{name: "wide", opts: appSetListOptions{output: "wide"}, golden: "appset-list-wide.golden"},
		{name: "other namespace", opts: appSetListOptions{output: "wide", appSetTarget: appSetTarget{appSetNamespace: "team-a"}}, golden: "appset-list-team-a.golden"},
		{name: "name", opts: appSetListOptions{output: "name", appSetTarget: appSetTarget{appSetNamespace: "team-a"}}, want: "team-a/previews\n"},
		{name: "project", opts: appSetListOptions{output: "name", projects: []string{"other"}}, want: ""},
		{name: "project matches", opts: appSetListOptions{output: "name", projects: []string{"other", "team-web"}}, want: "argocd/guestbook\n"},
		{name: "selector", opts: appSetListOptions{output: "name", selector: "team!=web"}, want: ""},
		{name: "bad selector", opts: appSetListOptions{output: "name", selector: "team in (("}, wantErr: `invalid --selector "team in ((":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppSetClient(t, testAppSets()...)
			tc.opts.namespace = "argocd"
			var out bytes.Buffer
			err := listAppSets(t.Context(), &out, c, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q… (exit 2)", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.golden != "" {
				checkGolden(t, tc.golden, out.String())
			} else if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppSetListJSON: -o json is the list of the objects as stored.
func TestAppSetListJSON(t *testing.T) {
	c := fakeAppSetClient(t, testAppSets()...)
	var out bytes.Buffer
	if err := listAppSets(t.Context(), &out, c, appSetListOptions{appSetTarget: appSetTarget{namespace: "argocd"}, output: "json"}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d items, want 1:\n%s", len(got), out.String())
	}
	var set v1alpha1.ApplicationSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got[0], &set); err != nil {
		t.Fatal(err)
	}
	if set.Name != "guestbook" || set.ManagedFields != nil {
		t.Errorf("item = %s, managedFields %v", set.Name, set.ManagedFields)
	}
}

func TestAppSetFormats(t *testing.T) {
	for _, tc := range []struct {
		format string
		list   bool
		ok     bool
	}{
		{"wide", false, true}, {"json", false, true}, {"yaml", false, true}, {"name", false, false}, {"tree", false, false},
		{"wide", true, true}, {"name", true, true}, {"text", true, false},
	} {
		err := checkAppSetFormat(tc.format, tc.list)
		if (err == nil) != tc.ok || (err != nil && exitCode(err) != exitUsage) {
			t.Errorf("checkAppSetFormat(%q, list %v) = %v", tc.format, tc.list, err)
		}
	}
}

func TestDeleteAppSets(t *testing.T) {
	base := appSetDeleteOptions{appSetTarget: appSetTarget{namespace: "argocd"}}
	for _, tc := range []struct {
		name     string
		opts     func(*appSetDeleteOptions)
		in       string
		wantGone []string
		wantOut  string
		wantErr  string
	}{
		{name: "yes", opts: func(o *appSetDeleteOptions) { o.names = []string{"guestbook"} },
			wantGone: []string{"argocd/guestbook"}, wantOut: "applicationset 'guestbook' deleted\n"},
		{name: "qualified name and wait", opts: func(o *appSetDeleteOptions) { o.names, o.wait = []string{"team-a/previews"}, true },
			wantGone: []string{"team-a/previews"}, wantOut: "applicationset 'team-a/previews' deleted\n"},
		{name: "prompt answered n", opts: func(o *appSetDeleteOptions) { o.names, o.prompt = []string{"guestbook"}, true }, in: "n\n",
			wantOut: "Are you sure you want to delete 'guestbook' and all its Applications? [y/n] The command to delete 'guestbook' was cancelled.\n"},
		{name: "prompt answered a for several", opts: func(o *appSetDeleteOptions) {
			o.names, o.prompt = []string{"guestbook", "team-a/previews"}, true
		}, in: "a\n", wantGone: []string{"argocd/guestbook", "team-a/previews"},
			wantOut: "Are you sure you want to delete 'guestbook' and all its Applications? [y/n/a] where 'a' is to delete all specified ApplicationSets and their Applications without prompting" +
				"applicationset 'guestbook' deleted\napplicationset 'team-a/previews' deleted\n"},
		{name: "missing", opts: func(o *appSetDeleteOptions) { o.names = []string{"nope"} }, wantErr: "applicationset nope not found in namespace argocd"},
		{name: "bad name", opts: func(o *appSetDeleteOptions) { o.names = []string{"team-a/"} }, wantErr: `invalid ApplicationSet name "team-a/": want NAME or NAMESPACE/NAME`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppSetClient(t, testAppSets()...)
			o := base
			tc.opts(&o)
			var out bytes.Buffer
			err := deleteAppSets(t.Context(), c, o, strings.NewReader(tc.in), &out)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q (exit 2)", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			var gone []string
			for _, key := range []types.NamespacedName{{Namespace: "argocd", Name: "guestbook"}, {Namespace: "team-a", Name: "previews"}} {
				if err := c.Get(t.Context(), key, &v1alpha1.ApplicationSet{}); err != nil {
					gone = append(gone, key.String())
				}
			}
			if diff := cmp.Diff(tc.wantGone, gone); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
		})
	}
}
