package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func load(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, obj); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return obj
}

func TestAssess(t *testing.T) {
	tests := []struct {
		file string
		want Result
		// wantErr is a substring of the error; the Result must then be
		// Unknown with the error as message.
		wantErr string
	}{
		{file: "deployment-healthy.yaml", want: Result{Status: Healthy}},
		{file: "deployment-extensions-healthy.yaml", want: Result{Status: Healthy}},
		{file: "deployment-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for rollout to finish: 1 out of 3 new replicas have been updated..."}},
		{file: "deployment-old-replicas-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for rollout to finish: 1 old replicas are pending termination..."}},
		{file: "deployment-unavailable-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for rollout to finish: 2 of 3 updated replicas are available..."}},
		{file: "deployment-generation-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for rollout to finish: observed deployment generation less than desired generation"}},
		{file: "deployment-degraded.yaml", want: Result{Status: Degraded, Message: `Deployment "web" exceeded its progress deadline`}},
		{file: "deployment-suspended.yaml", want: Result{Status: Suspended, Message: "Deployment is paused"}},
		{file: "deployment-invalid-unknown.yaml", wantErr: "assess health of Deployment/shop/broken: read Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"},

		{file: "statefulset-healthy.yaml", want: Result{Status: Healthy, Message: "statefulset rolling update complete 3 pods at revision db-7f9..."}},
		{file: "statefulset-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for 2 pods to be ready..."}},
		{file: "statefulset-revision-progressing.yaml", want: Result{Status: Progressing, Message: "waiting for statefulset rolling update to complete 1 pods at revision db-8a1..."}},
		{file: "statefulset-unobserved-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for statefulset spec update to be observed..."}},
		{file: "statefulset-ondelete-healthy.yaml", want: Result{Status: Healthy, Message: "statefulset has 2 ready pods"}},
		{file: "statefulset-partition-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated..."}},
		{file: "statefulset-partition-healthy.yaml", want: Result{Status: Healthy, Message: "partitioned roll out complete: 2 new pods have been updated..."}},

		{file: "daemonset-healthy.yaml", want: Result{Status: Healthy}},
		{file: "daemonset-progressing.yaml", want: Result{Status: Progressing, Message: `Waiting for daemon set "agent" rollout to finish: 2 out of 4 new pods have been updated...`}},
		{file: "daemonset-unavailable-progressing.yaml", want: Result{Status: Progressing, Message: `Waiting for daemon set "agent" rollout to finish: 3 of 4 updated pods are available...`}},
		{file: "daemonset-ondelete-healthy.yaml", want: Result{Status: Healthy, Message: "daemon set 1 out of 4 new pods have been updated"}},

		{file: "workflow-failed-degraded.yaml", want: Result{Status: Degraded, Message: "child 'migrate-1' failed"}},
		{file: "workflow-running-progressing.yaml", want: Result{Status: Progressing}},
		{file: "workflow-succeeded-healthy.yaml", want: Result{Status: Healthy}},

		{file: "replicaset-healthy.yaml", want: Result{Status: Healthy}},
		{file: "replicaset-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for rollout to finish: 1 out of 2 new replicas are available..."}},
		{file: "replicaset-degraded.yaml", want: Result{Status: Degraded, Message: `pods "web-5d9c-" is forbidden: exceeded quota: compute`}},

		{file: "pod-running-healthy.yaml", want: Result{Status: Healthy}},
		{file: "pod-pending-progressing.yaml", want: Result{Status: Progressing, Message: "0/3 nodes are available: 3 Insufficient cpu."}},
		{file: "pod-crashloop-degraded.yaml", want: Result{Status: Degraded, Message: "back-off 5m0s restarting failed container=app pod=web-3_shop"}},
		{file: "pod-imagepullbackoff-degraded.yaml", want: Result{Status: Degraded, Message: `container "app" is waiting: ImagePullBackOff`}},
		{file: "pod-hook-imagepullbackoff-progressing.yaml", want: Result{Status: Progressing}},
		{file: "pod-running-not-ready-progressing.yaml", want: Result{Status: Progressing}},
		{file: "pod-running-restarted-degraded.yaml", want: Result{Status: Degraded, Message: "readiness probe failing"}},
		{file: "pod-running-restart-never-progressing.yaml", want: Result{Status: Progressing}},
		{file: "pod-running-ignore-restart-policy-healthy.yaml", want: Result{Status: Healthy}},
		{file: "pod-hook-ignore-restart-policy-progressing.yaml", want: Result{Status: Progressing}},
		{file: "pod-failed-degraded.yaml", want: Result{Status: Degraded, Message: `container "app" failed with exit code 3`}},
		{file: "pod-oomkilled-degraded.yaml", want: Result{Status: Degraded, Message: "OOMKilled"}},
		{file: "pod-evicted-degraded.yaml", want: Result{Status: Degraded, Message: "The node was low on resource: memory."}},
		{file: "pod-succeeded-healthy.yaml", want: Result{Status: Healthy}},
		{file: "pod-deleting-progressing.yaml", want: Result{Status: Progressing, Message: "Pending deletion"}},
		{file: "pod-hook-finalizer-deleting-healthy.yaml", want: Result{Status: Healthy}},

		{file: "job-running-progressing.yaml", want: Result{Status: Progressing}},
		{file: "job-complete-healthy.yaml", want: Result{Status: Healthy, Message: "Reached expected number of succeeded pods"}},
		{file: "job-failed-degraded.yaml", want: Result{Status: Degraded, Message: "Job has reached the specified backoff limit"}},
		{file: "job-suspended.yaml", want: Result{Status: Suspended, Message: "Job suspended"}},
		{file: "job-suspend-spec-suspended.yaml", want: Result{Status: Suspended, Message: "Job is suspended"}},
		{file: "job-resumed-progressing.yaml", want: Result{Status: Progressing}},

		{file: "cronjob-suspended.yaml", want: Result{Status: Suspended, Message: "CronJob is Suspended"}},
		{file: "cronjob-healthy.yaml", want: Result{Status: Healthy, Message: "CronJob has completed its last execution successfully"}},
		{file: "cronjob-degraded.yaml", want: Result{Status: Degraded, Message: "CronJob has not completed its last execution successfully"}},
		{file: "cronjob-running-healthy.yaml", want: Result{Status: Healthy, Message: "The job is running. Its last execution may not have been successful"}},
		{file: "cronjob-never-succeeded-healthy.yaml", want: Result{Status: Healthy, Message: "The CronJob never completed successfully. It may not be healthy"}},
		{file: "cronjob-not-scheduled-healthy.yaml", want: Result{Status: Healthy, Message: "CronJob has not been scheduled yet"}},
		{file: "cronjob-no-status-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for CronJob"}},

		{file: "pvc-bound-healthy.yaml", want: Result{Status: Healthy}},
		{file: "pvc-pending-progressing.yaml", want: Result{Status: Progressing}},
		{file: "pvc-lost-degraded.yaml", want: Result{Status: Degraded, Message: "the bound volume is lost"}},

		{file: "service-clusterip-healthy.yaml", want: Result{Status: Healthy}},
		{file: "service-loadbalancer-healthy.yaml", want: Result{Status: Healthy}},
		{file: "service-loadbalancer-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for a load balancer address"}},
		{file: "ingress-healthy.yaml", want: Result{Status: Healthy}},
		{file: "ingress-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting for a load balancer address"}},

		{file: "hpa-v2-healthy.yaml", want: Result{Status: Healthy, Message: "recommended size matches current size"}},
		{file: "hpa-v2-degraded.yaml", want: Result{Status: Degraded, Message: "the HPA was unable to compute the replica count: missing request for cpu"}},
		{file: "hpa-v2-object-metric-degraded.yaml", want: Result{Status: Degraded, Message: "the HPA was unable to compute the replica count: unable to get metric requests-per-second"}},
		{file: "hpa-v2-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting to Autoscale"}},
		{file: "hpa-v1-healthy.yaml", want: Result{Status: Healthy, Message: "the HPA controller was able to get the target's current scale"}},
		{file: "hpa-v1-progressing.yaml", want: Result{Status: Progressing, Message: "Waiting to Autoscale"}},
		{file: "hpa-v1-bad-annotation-unknown.yaml", wantErr: "read annotation autoscaling.alpha.kubernetes.io/conditions"},

		{file: "apiservice-healthy.yaml", want: Result{Status: Healthy, Message: "Passed: all checks passed"}},
		{file: "apiservice-progressing.yaml", want: Result{Status: Progressing, Message: `MissingEndpoints: endpoints for service/metrics-server in "kube-system" have no addresses`}},

		{file: "crd-healthy.yaml", want: Result{Status: Healthy, Message: "CRD is healthy"}},
		{file: "crd-names-degraded.yaml", want: Result{Status: Degraded, Message: `CRD names have not been accepted: "WidgetList" is already in use`}},
		{file: "crd-not-established-degraded.yaml", want: Result{Status: Degraded, Message: "CRD is not established: not all names are accepted"}},
		{file: "crd-installing-progressing.yaml", want: Result{Status: Progressing, Message: "CRD is not established: the initial names have been accepted"}},
		{file: "crd-terminating-progressing.yaml", want: Result{Status: Progressing, Message: "CRD is being terminated: CustomResource deletion is in progress"}},
		{file: "crd-no-conditions-progressing.yaml", want: Result{Status: Progressing, Message: "Status conditions not found"}},

		{file: "application-healthy.yaml", want: Result{Status: Healthy}},
		{file: "application-degraded.yaml", want: Result{Status: Degraded, Message: "one or more objects failed to apply"}},
		{file: "application-no-health-progressing.yaml", want: Result{Status: Progressing}},
		{file: "application-odd-unknown.yaml", want: Result{Status: Unknown, Message: `unknown health status "Sideways"`}},

		{file: "configmap-healthy.yaml", want: Result{Status: Healthy}},
		{file: "custom-ready-healthy.yaml", want: Result{Status: Healthy, Message: "Resource is Ready"}},
		{file: "custom-ready-false-progressing.yaml", want: Result{Status: Progressing, Message: "waiting for the backend"}},
		{file: "custom-stalled-degraded.yaml", want: Result{Status: Degraded, Message: "spec.size must be positive"}},
		{file: "custom-generation-progressing.yaml", want: Result{Status: Progressing, Message: "Widget generation is 3, but latest observed generation is 2"}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.file] = true
		t.Run(strings.TrimSuffix(tt.file, ".yaml"), func(t *testing.T) {
			got, err := Assess(load(t, tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if diff := cmp.Diff(Result{Status: Unknown, Message: err.Error()}, got); diff != "" {
					t.Errorf("result on error mismatch (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Assess: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Assess mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// Every fixture is in the table, and its name states its outcome.
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("testdata %s has no test case", filepath.Base(f))
		}
	}
	for _, tt := range tests {
		status := string(tt.want.Status)
		if tt.wantErr != "" {
			status = string(Unknown)
		}
		if !strings.Contains(tt.file, strings.ToLower(status)) {
			t.Errorf("testdata %s does not say its outcome %s", tt.file, status)
		}
	}
}

func TestAssessNil(t *testing.T) {
	got, err := Assess(nil)
	if err == nil || got.Status != Unknown {
		t.Errorf("Assess(nil) = %+v, %v; want Unknown and an error", got, err)
	}
}

func TestWorst(t *testing.T) {
	tests := []struct {
		name string
		in   []Status
		want Status
	}{
		{"none", nil, Healthy},
		{"one", []Status{Progressing}, Progressing},
		{"suspended beats healthy", []Status{Healthy, Suspended}, Suspended},
		{"progressing beats suspended", []Status{Suspended, Progressing, Healthy}, Progressing},
		{"missing beats progressing", []Status{Progressing, Missing}, Missing},
		{"degraded beats missing", []Status{Missing, Degraded, Progressing}, Degraded},
		{"unknown is worst", []Status{Degraded, Unknown, Healthy}, Unknown},
		{"unrecognized counts as unknown", []Status{Degraded, Status("Sideways")}, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Worst(tt.in...); got != tt.want {
				t.Errorf("Worst(%v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestIsWorseOrder(t *testing.T) {
	ordered := []Status{Healthy, Suspended, Progressing, Missing, Degraded, Unknown}
	for i, a := range ordered {
		for j, b := range ordered {
			if got, want := IsWorse(a, b), j > i; got != want {
				t.Errorf("IsWorse(%s, %s) = %v, want %v", a, b, got, want)
			}
		}
	}
}
