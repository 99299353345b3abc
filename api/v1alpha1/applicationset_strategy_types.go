package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The strategy types and deletion orders of Argo CD's ApplicationSet
// strategy.
const (
	ApplicationSetStrategyAllAtOnce   = "AllAtOnce"
	ApplicationSetStrategyRollingSync = "RollingSync"
	DeletionOrderAllAtOnce            = "AllAtOnce"
	DeletionOrderReverse              = "Reverse"
)

// ApplicationSetStrategy is how an ApplicationSet's Applications are
// synced (Type: AllAtOnce, the default, or RollingSync) and deleted
// (DeletionOrder: AllAtOnce, the default, or Reverse).
type ApplicationSetStrategy struct {
	// +optional
	Type string `json:"type,omitempty"`
	// +optional
	RollingSync *ApplicationSetRolloutStrategy `json:"rollingSync,omitempty"`
	// DeletionOrder Reverse deletes the Applications of the last step
	// first when the ApplicationSet is deleted (RollingSync only).
	// +optional
	DeletionOrder string `json:"deletionOrder,omitempty"`
}

// IsRollingSync reports whether the strategy is RollingSync with its
// rollingSync set (Argo CD's IsRollingSyncStrategy); nil-safe.
func (s *ApplicationSetStrategy) IsRollingSync() bool {
	return s != nil && s.Type == ApplicationSetStrategyRollingSync && s.RollingSync != nil
}

// RollingSyncSteps are the steps of a RollingSync strategy; nil for any
// other.
func (s *ApplicationSetStrategy) RollingSyncSteps() []ApplicationSetRolloutStep {
	if !s.IsRollingSync() {
		return nil
	}
	return s.RollingSync.Steps
}

// ApplicationSetRolloutStrategy are the steps of a RollingSync, in order.
type ApplicationSetRolloutStrategy struct {
	// +optional
	Steps []ApplicationSetRolloutStep `json:"steps,omitempty"`
}

// ApplicationSetRolloutStep selects the Applications of one step by their
// labels and bounds how many of them sync at once.
type ApplicationSetRolloutStep struct {
	// MatchExpressions must all match an Application's labels.
	// +optional
	MatchExpressions []ApplicationMatchExpression `json:"matchExpressions,omitempty"`
	// MaxUpdate is how many of the step's Applications sync at once: a
	// number or a percentage of the step's Applications (rounded down,
	// at least one when above 0%); unset is all of them.
	// +optional
	MaxUpdate *intstr.IntOrString `json:"maxUpdate,omitempty"`
}

// ApplicationMatchExpression matches a label: In (its value is one of
// Values) or NotIn (it is none of them, or the label is absent).
type ApplicationMatchExpression struct {
	// +optional
	Key string `json:"key,omitempty"`
	// +optional
	Operator string `json:"operator,omitempty"`
	// +optional
	Values []string `json:"values,omitempty"`
}

// ProgressiveSyncStatusCode is an Application's state in a RollingSync.
type ProgressiveSyncStatusCode string

// The states of ProgressiveSyncStatusCode, as Argo CD names them.
const (
	// ProgressiveSyncWaiting: the Application has changes its step has
	// not synced yet.
	ProgressiveSyncWaiting ProgressiveSyncStatusCode = "Waiting"
	// ProgressiveSyncPending: its sync was requested, not yet started.
	ProgressiveSyncPending ProgressiveSyncStatusCode = "Pending"
	// ProgressiveSyncProgressing: synced, not yet Healthy.
	ProgressiveSyncProgressing ProgressiveSyncStatusCode = "Progressing"
	// ProgressiveSyncHealthy: Synced and Healthy.
	ProgressiveSyncHealthy ProgressiveSyncStatusCode = "Healthy"
)

// ApplicationSetApplicationStatus is one Application's state in a
// RollingSync, in the ApplicationSet's status.applicationStatus.
type ApplicationSetApplicationStatus struct {
	Application string `json:"application"`
	// +optional
	LastTransitionTime *metav1.Time              `json:"lastTransitionTime,omitempty"`
	Message            string                    `json:"message"`
	Status             ProgressiveSyncStatusCode `json:"status"`
	// Step is the 1-based step that selects the Application, "-1" for none.
	Step string `json:"step"`
	// TargetRevisions are the revisions the Application was compared at
	// when its state last changed.
	TargetRevisions []string `json:"targetRevisions"`
}
