package webhook_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/test/testutil"
	"github.com/tollgate-dev/tollgate/webhook"
)

// trackedHook is the third webhook of config/webhook.
const trackedHook = "tracked.tollgate.dev"

// TestEphemeralContainers is kubectl debug through the real API server: the
// pods/ephemeralcontainers sub-resource is sent to the webhook and the
// added container judged.
func TestEphemeralContainers(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27.3"}}},
	}, metav1.CreateOptions{})
	wantAllowed(t, err)

	debug := func(name, image string) error {
		p := pod.DeepCopy()
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: name, Image: image, Stdin: true, TTY: true,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			},
			TargetContainerName: "app",
		})
		updated, err := cs.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{})
		if err == nil {
			pod = updated
		}
		return err
	}
	err = debug("debugger", "busybox")
	wantDenied(t, err, resourcesHook, "no-latest-tag")
	want := fmt.Sprintf(`admission webhook %q denied the request: [no-latest-tag] ephemeral container "debugger" uses image "busybox" without a tag, which means the mutable tag "latest"; pin a version tag or a digest (@sha256:...)`, resourcesHook)
	if got := err.Error(); got != want {
		t.Errorf("error = %q\nwant %q", got, want)
	}
	if !reviews.sent("", "Pod", "ephemeralcontainers", ns, "api") {
		t.Error("the webhook received no pods/ephemeralcontainers review")
	}

	wantAllowed(t, debug("debugger", "busybox:1.37.0"))
	if len(pod.Spec.EphemeralContainers) != 1 {
		t.Fatalf("pod has %d ephemeral containers, want the pinned one", len(pod.Spec.EphemeralContainers))
	}
}

// TestTenantNamedLikeAController: a tenant who may create namespaces and
// service accounts names them after a tool the cluster does not run. The
// default exemptions do not know the name, so its Secret is judged.
func TestTenantNamedLikeAController(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	const tool = "external-secrets"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tool}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: tool, Name: tool}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-writer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tollgate-test-writer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: tool, Name: tool}},
		},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = env.Client.Delete(ctx, objs[0])
	})

	tenant := newServiceAccountUser(t, tool, tool)
	wantDenied(t, tenant.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		StringData: map[string]string{"password": "hunter2"},
	}), resourcesHook, "no-plaintext-secret")
}

// TestNotIntercepted: what no rule judges never reaches the webhook, even
// when it carries Argo CD's tracking metadata.
func TestNotIntercepted(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")
	trackedBy := func(kind, name string) map[string]string {
		return map[string]string{webhook.TrackingIDAnnotation: fmt.Sprintf("web:%s:%s/%s", kind, ns, name)}
	}
	instance := map[string]string{webhook.InstanceLabel: "web"}
	now := metav1.NowMicro()

	tests := []struct {
		name    string
		obj     client.Object
		group   string
		kind    string
		cluster bool
	}{
		{
			name: "lease",
			obj: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: "lock", Annotations: trackedBy("coordination.k8s.io/Lease", "lock"), Labels: instance,
			}},
			group: "coordination.k8s.io", kind: "Lease",
		},
		{
			name: "core event",
			obj: &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: "api.1", Annotations: trackedBy("/Event", "api.1"), Labels: instance},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "api", APIVersion: "v1"},
				Reason:         "Started", Message: "Started container app", Type: corev1.EventTypeNormal,
				FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
				Source: corev1.EventSource{Component: "kubelet"},
			},
			kind: "Event",
		},
		{
			name: "events.k8s.io event",
			obj: &eventsv1.Event{
				ObjectMeta:          metav1.ObjectMeta{Namespace: ns, Name: "api.2", Annotations: trackedBy("events.k8s.io/Event", "api.2"), Labels: instance},
				EventTime:           now,
				ReportingController: "example.com/test", ReportingInstance: "test-1",
				Action: "Started", Reason: "Started", Type: corev1.EventTypeNormal,
				Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "api", APIVersion: "v1"},
			},
			group: "events.k8s.io", kind: "Event",
		},
		{
			name: "untracked config map",
			obj: &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
				Data:       map[string]string{"mode": "fast"},
			},
			kind: "ConfigMap",
		},
		{
			name: "tollgate's own cluster role",
			obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
				Name: "tollgate-webhook", Labels: map[string]string{webhook.InstanceLabel: "tollgate"},
			}},
			group: "rbac.authorization.k8s.io", kind: "ClusterRole", cluster: true,
		},
		{
			// The API server may not send reviews to admission webhooks at
			// all; the configuration leaves them out in any case.
			name: "subject access review",
			obj: &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               "alice",
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "pods"},
			}},
			group: "authorization.k8s.io", kind: "SubjectAccessReview", cluster: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantAllowed(t, u.Create(ctx, tt.obj))
			if tt.cluster && tt.obj.GetName() != "" {
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), tt.obj) })
			}
			objNS := ns
			if tt.cluster {
				objNS = ""
			}
			if reviews.sent(tt.group, tt.kind, "", objNS, tt.obj.GetName()) {
				t.Errorf("the webhook received a review of %s %s", tt.kind, tt.obj.GetName())
			}
		})
	}
}

// TestTrackedIntercepted: an object of a kind only the project rules judge
// reaches the webhook when, and only when, it carries Argo CD's tracking
// metadata, and is judged with its Application's AppProject.
func TestTrackedIntercepted(t *testing.T) {
	ctx := t.Context()
	inside := env.Namespace(t)
	outside := env.Namespace(t)
	u := newUser(t, "")
	project := unique(t, inside, "team")
	appName := unique(t, inside, "web")

	proj := appProject(project, inside)
	wantAllowed(t, u.Create(ctx, proj))
	waitCached(t, proj) // the Application is judged against it
	app := application(appName, project, inside)
	wantAllowed(t, u.Create(ctx, app))
	waitCached(t, app)

	configMap := func(ns, name string, annotations, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations, Labels: labels},
			Data:       map[string]string{"mode": "fast"},
		}
	}
	trackedBy := func(ns, name string) map[string]string {
		return map[string]string{webhook.TrackingIDAnnotation: fmt.Sprintf("%s:/ConfigMap:%s/%s", appName, ns, name)}
	}

	plain := configMap(inside, "plain", nil, nil)
	wantAllowed(t, u.Create(ctx, plain))
	if reviews.sent("", "ConfigMap", "", inside, "plain") {
		t.Error("the webhook received a review of a ConfigMap without tracking metadata")
	}

	wantAllowed(t, u.Create(ctx, configMap(inside, "tracked", trackedBy(inside, "tracked"), nil)))
	if !reviews.sent("", "ConfigMap", "", inside, "tracked") {
		t.Error("the webhook received no review of a ConfigMap with the tracking annotation")
	}
	err := u.Create(ctx, configMap(outside, "tracked", trackedBy(outside, "tracked"), nil))
	wantDenied(t, err, trackedHook, "project-destination-denied")

	err = u.Create(ctx, configMap(outside, "labelled", nil, map[string]string{webhook.InstanceLabel: appName}))
	wantDenied(t, err, trackedHook, "project-destination-denied")

	// Tracked cluster-scoped objects are sent too, but for tollgate's own
	// (TestNotIntercepted).
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
		Name: appName + "-reader", Labels: map[string]string{webhook.InstanceLabel: appName},
	}}
	err = u.Create(ctx, role)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), role) })
	wantDenied(t, err, trackedHook, "project-resource-denied")

	// What another webhook judges is judged once, tracked or not.
	deployment := testutil.Deployment(inside, "api", "registry.example.com/api:1.2.3")
	deployment.Annotations = trackedBy(inside, "api")
	wantAllowed(t, u.Create(ctx, deployment))
	if n := reviews.count("apps", "Deployment", "", inside, "api"); n != 1 {
		t.Errorf("reviews of a tracked Deployment: %d, want 1", n)
	}

	// Removing the tracking metadata in an UPDATE is still sent (the old
	// object carries it); the new object belongs to no Application.
	plain.Labels = map[string]string{webhook.InstanceLabel: appName}
	wantAllowed(t, u.Update(ctx, plain))
	before := reviews.count("", "ConfigMap", "", inside, "plain")
	plain.Labels = nil
	plain.Data["mode"] = "slow"
	wantAllowed(t, u.Update(ctx, plain))
	if after := reviews.count("", "ConfigMap", "", inside, "plain"); after != before+1 {
		t.Errorf("reviews of an UPDATE dropping the tracking label: %d, want 1", after-before)
	}
}

// TestMatchConditionsNeverErr: the API server counts every error of a
// webhook's match conditions, which failurePolicy then decides (Ignore
// skips the review, Fail refuses the write: with the overlay that makes
// tracked.tollgate.dev Fail, a condition reading the absent namespace of
// tollgate's own ClusterRoleBinding would refuse its repair). After such
// writes and the tests that ran before, the count for tollgate's
// webhooks must be zero.
func TestMatchConditionsNeverErr(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")
	instance := map[string]string{webhook.InstanceLabel: "tollgate"}
	own := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-controller", Labels: instance},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
	}
	wantAllowed(t, u.Create(ctx, own))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), own) })
	wantAllowed(t, u.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: instance}}))

	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const name = "apiserver_admission_match_condition_evaluation_errors_total{"
	var seen []string
	for _, line := range strings.Split(string(metrics), "\n") {
		if strings.HasPrefix(line, name) && strings.Contains(line, `.tollgate.dev"`) {
			seen = append(seen, line)
		}
	}
	if len(seen) > 0 {
		t.Errorf("the match conditions of tollgate's webhooks failed:\n%s", strings.Join(seen, "\n"))
	}
}
