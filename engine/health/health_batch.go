package health

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobHealth follows Argo CD: Failed is Degraded, Complete is Healthy,
// Suspended is Suspended, anything else Progressing. Unlike Argo CD, a
// condition counts only when its status is True (a resumed Job carries
// Suspended=False and is running, not healthy), and a Job with
// spec.suspend and no conditions yet is already Suspended.
func jobHealth(obj *unstructured.Unstructured) (Result, error) {
	var job batchv1.Job
	if err := fromUnstructured(obj, &job); err != nil {
		return Result{}, err
	}
	var failed, complete, suspended *batchv1.JobCondition
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			failed = c
		case batchv1.JobComplete:
			complete = c
		case batchv1.JobSuspended:
			suspended = c
		}
	}
	switch {
	case failed != nil:
		return Result{Status: Degraded, Message: failed.Message}, nil
	case complete != nil:
		return Result{Status: Healthy, Message: complete.Message}, nil
	case suspended != nil:
		return Result{Status: Suspended, Message: suspended.Message}, nil
	case job.Spec.Suspend != nil && *job.Spec.Suspend:
		return Result{Status: Suspended, Message: "Job is suspended"}, nil
	}
	return Result{Status: Progressing}, nil
}

// cronJobHealth follows Argo CD's CronJob health check: suspended is
// Suspended; a CronJob whose last run did not succeed (last success before
// last schedule and nothing running) is Degraded; a CronJob with no status
// yet is Progressing; anything else is Healthy, since a missed run cannot
// be seen from the status.
func cronJobHealth(obj *unstructured.Unstructured) (Result, error) {
	var cj batchv1.CronJob
	if err := fromUnstructured(obj, &cj); err != nil {
		return Result{}, err
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return Result{Status: Suspended, Message: "CronJob is Suspended"}, nil
	}
	if _, hasStatus := obj.Object["status"]; !hasStatus {
		return Result{Status: Progressing, Message: "Waiting for CronJob"}, nil
	}
	st := cj.Status
	switch {
	case st.LastScheduleTime == nil:
		return Result{Status: Healthy, Message: "CronJob has not been scheduled yet"}, nil
	case st.LastSuccessfulTime == nil:
		return Result{Status: Healthy, Message: "The CronJob never completed successfully. It may not be healthy"}, nil
	case len(st.Active) > 0:
		return Result{Status: Healthy, Message: "The job is running. Its last execution may not have been successful"}, nil
	case st.LastSuccessfulTime.Before(st.LastScheduleTime):
		return Result{Status: Degraded, Message: "CronJob has not completed its last execution successfully"}, nil
	}
	return Result{Status: Healthy, Message: "CronJob has completed its last execution successfully"}, nil
}
