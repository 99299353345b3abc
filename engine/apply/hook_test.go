package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// liveJob is a live Job shop/migrate carrying the tracking annotation id
// ("" for none).
func liveJob(id string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("batch/v1")
	u.SetKind("Job")
	u.SetNamespace("shop")
	u.SetName("migrate")
	if id != "" {
		u.SetAnnotations(map[string]string{v1alpha1.AnnotationKeyTrackingID: id})
	}
	return u
}

const takeoverRule = "a hook deletes, replaces or forces only an object that carries this application's tracking id"

// labelled returns live with the instance label app.
func labelled(live *unstructured.Unstructured, app string) *unstructured.Unstructured {
	live.SetLabels(map[string]string{v1alpha1.LabelKeyAppInstance: app})
	return live
}

func TestTakeoverMessage(t *testing.T) {
	tests := []struct {
		name   string
		live   *unstructured.Unstructured
		app    string
		method v1alpha1.TrackingMethod
		want   string
	}{
		{
			name: "ours",
			live: liveJob("shop:batch/Job:shop/migrate"),
			app:  "shop",
		},
		{
			name: "another application's",
			live: liveJob("billing:batch/Job:shop/migrate"),
			app:  "shop",
			want: `Job/shop/migrate exists and is tracked by application "billing" (tracking id billing:batch/Job:shop/migrate); ` + takeoverRule,
		},
		{
			name: "untracked, created by a person",
			live: liveJob(""),
			app:  "shop",
			want: "Job/shop/migrate exists and is not tracked by any application (no argocd.argoproj.io/tracking-id annotation); " + takeoverRule,
		},
		{
			name: "unreadable tracking id",
			live: liveJob("shop"),
			app:  "shop",
			want: `Job/shop/migrate exists with an unreadable tracking id "shop"; ` + takeoverRule,
		},
		{
			name: "our id copied from another object",
			live: liveJob("shop:batch/Job:shop/other"),
			app:  "shop",
			want: "Job/shop/migrate exists with tracking id shop:batch/Job:shop/other, which names another object; " + takeoverRule,
		},
		{
			name: "no application: nothing is ours",
			live: liveJob("shop:batch/Job:shop/migrate"),
			app:  "",
			want: `Job/shop/migrate exists and is tracked by application "shop" (tracking id shop:batch/Job:shop/migrate); ` + takeoverRule,
		},
		{
			name:   "ours by label",
			live:   labelled(liveJob(""), "shop"),
			app:    "shop",
			method: v1alpha1.TrackingMethodLabel,
		},
		{
			name:   "our label is no ownership with annotation tracking",
			live:   labelled(liveJob(""), "shop"),
			app:    "shop",
			method: v1alpha1.TrackingMethodAnnotation,
			want:   "Job/shop/migrate exists and is not tracked by any application (no argocd.argoproj.io/tracking-id annotation); " + takeoverRule,
		},
		{
			name:   "another application's by label",
			live:   labelled(liveJob(""), "billing"),
			app:    "shop",
			method: v1alpha1.TrackingMethodAnnotationAndLabel,
			want:   `Job/shop/migrate exists and is tracked by application "billing" (label app.kubernetes.io/instance); ` + takeoverRule,
		},
		{
			name:   "untracked, label methods",
			live:   liveJob(""),
			app:    "shop",
			method: v1alpha1.TrackingMethodLabel,
			want:   "Job/shop/migrate exists and is not tracked by any application (no argocd.argoproj.io/tracking-id annotation or app.kubernetes.io/instance label); " + takeoverRule,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, takeoverMessage(tc.live, tc.app, tc.method)); diff != "" {
				t.Errorf("takeoverMessage (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideOwnershipHooks checks that a hook over an object that is not
// its Application's fails before anything is written, whatever its delete
// policy or sync options, while an ordinary object is left to the dry run.
func TestDecideOwnershipHooks(t *testing.T) {
	type outcome struct {
		Status ResultCode
		Force  bool
		Failed bool
	}
	tests := []struct {
		name string
		task plan.Task
		live *unstructured.Unstructured
		want outcome
	}{
		{
			name: "hook replaces its own object",
			task: plan.Task{Hook: true, HookDeletePolicies: []plan.HookDeletePolicy{plan.BeforeHookCreation}},
			live: liveJob("shop:batch/Job:shop/migrate"),
			want: outcome{Force: true},
		},
		{
			name: "hook over another application's object",
			task: plan.Task{Hook: true, HookDeletePolicies: []plan.HookDeletePolicy{plan.BeforeHookCreation}},
			live: liveJob("billing:batch/Job:shop/migrate"),
			want: outcome{Status: ResultSyncFailed, Failed: true},
		},
		{
			name: "hook kept forever over an untracked object",
			task: plan.Task{Hook: true, HookDeletePolicies: []plan.HookDeletePolicy{plan.HookNever}},
			live: liveJob(""),
			want: outcome{Status: ResultSyncFailed, Failed: true},
		},
		{
			name: "hook deleted on success over an untracked object",
			task: plan.Task{Hook: true, HookDeletePolicies: []plan.HookDeletePolicy{plan.HookSucceeded}},
			live: liveJob(""),
			want: outcome{Status: ResultSyncFailed, Failed: true},
		},
		{
			name: "hook with Replace=true over an untracked object",
			task: plan.Task{Hook: true, HookDeletePolicies: []plan.HookDeletePolicy{plan.BeforeHookCreation}, SyncOptions: plan.SyncOptions{Replace: true}},
			live: liveJob(""),
			want: outcome{Status: ResultSyncFailed, Failed: true},
		},
		{
			name: "hook with nothing in its place",
			task: plan.Task{Hook: true, HookDeletePolicies: []plan.HookDeletePolicy{plan.BeforeHookCreation}},
		},
		{
			name: "ordinary untracked object is applied without force",
			task: plan.Task{},
			live: liveJob(""),
		},
		{
			name: "Replace=true over its own object",
			task: plan.Task{SyncOptions: plan.SyncOptions{Replace: true}},
			live: liveJob("shop:batch/Job:shop/migrate"),
			want: outcome{Force: true},
		},
		{
			name: "Replace=true over another application's object",
			task: plan.Task{SyncOptions: plan.SyncOptions{Replace: true}},
			live: liveJob("billing:batch/Job:shop/migrate"),
			want: outcome{Status: ResultSyncFailed},
		},
		{
			name: "Force=true over an untracked object",
			task: plan.Task{SyncOptions: plan.SyncOptions{Force: true}},
			live: liveJob(""),
			want: outcome{Status: ResultSyncFailed},
		},
		{
			name: "Force=true with nothing in its place is created",
			task: plan.Task{SyncOptions: plan.SyncOptions{Force: true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := &item{task: tc.task, live: tc.live}
			(&Applier{}).decideOwnership(it, "shop")
			got := outcome{Status: it.res.Status, Force: it.force, Failed: it.res.HookPhase == HookFailed}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decideOwnership (-want +got):\n%s", diff)
			}
		})
	}
}
