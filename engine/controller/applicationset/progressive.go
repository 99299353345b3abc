package applicationset

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Progressive syncs (an ApplicationSet's strategy type RollingSync) as
// Argo CD's ApplicationSet controller runs them with
// --enable-progressive-syncs.
//
// The steps select the generated Applications by their labels. Each
// Application's state is kept in the ApplicationSet's
// status.applicationStatus: Waiting (it has changes to sync), Pending (its
// sync was requested), Progressing (it synced, not yet Healthy), Healthy.
// An Application becomes Pending only when every Application of the steps
// before its own is Healthy, and at most maxUpdate of a step's
// Applications are Pending or Progressing at once. The controller turns
// automated sync off on the Applications it writes and requests the sync
// of each Pending one itself, as a person's sync is requested.
//
// The code follows Argo CD's (applicationset/progressivesync), quirks
// included, so that a rollout progresses as it does there: an Application
// no step selects is counted in the first step's maxUpdate, an invalid
// operator on a label the Application lacks does not deselect it, and an
// Application two steps select waits in both.

// The messages of status.applicationStatus, as Argo CD writes them.
const (
	msgNoStatus            = "No Application status found, defaulting status to Waiting"
	msgRevisionAndSpec     = "Application has pending changes (revision and spec differ), setting status to Waiting"
	msgRevision            = "Application has pending changes, setting status to Waiting"
	msgSpec                = "Application has pending changes (spec differs), setting status to Waiting"
	msgSyncedHealthy       = "Application resource has synced, updating status to Healthy"
	msgSyncedProgressing   = "Application resource has synced, updating status to Progressing"
	msgSyncSucceeded       = "Application resource completed a sync successfully, updating status from Pending to Progressing"
	msgSyncCompleted       = "Application resource completed a sync, updating status from Pending to Progressing"
	msgSyncStarted         = "Application resource became Progressing, updating status from Pending to Progressing"
	msgAppError            = "Application resource has error and cannot sync, updating status to Progressing"
	msgBecameHealthy       = "Application resource became Healthy, updating status from Progressing to Healthy"
	msgPending             = "Application moved to Pending status, watching for the Application resource to start Progressing"
	msgNoSteps             = "No steps defined for rollout"
	msgRolloutComplete     = "ApplicationSet Rollout has completed"
	msgRolloutConfigured   = "Rolling Sync Configured correctly"
	msgRolloutOfStepPrefix = "ApplicationSet is performing rollout of step "
)

// rollout is one pass of a RollingSync: which step selects which
// Application, the Applications' new states, and which may sync.
type rollout struct {
	steps []v1alpha1.ApplicationSetRolloutStep
	// byStep are the Applications each step selects, by name.
	byStep [][]string
	// stepOf is the first step that selects an Application.
	stepOf map[string]int
	issues rolloutIssues
	// statuses are the new status.applicationStatus, sorted by name.
	statuses []v1alpha1.ApplicationSetApplicationStatus
	// toSync are the Applications of the steps that may sync now.
	toSync map[string]bool
	// again is set when a state moves on at the next pass whatever
	// happens: an Application that became Progressing already Synced and
	// Healthy (Argo CD moves it to Healthy one pass later, and no event
	// of the Application would come to start that pass).
	again bool
}

// newRollout sorts the generated Applications into the steps, as Argo
// CD's buildAppDependencyList: every matchExpression of a step must match
// an Application's labels.
func newRollout(steps []v1alpha1.ApplicationSetRolloutStep, apps []*v1alpha1.Application) *rollout {
	ro := &rollout{steps: steps, byStep: make([][]string, len(steps)), stepOf: map[string]int{}}
	for _, app := range apps {
		for i, step := range steps {
			if !ro.selects(i, step, app.Labels) {
				continue
			}
			ro.byStep[i] = append(ro.byStep[i], app.Name)
			first, seen := ro.stepOf[app.Name]
			if !seen {
				ro.stepOf[app.Name] = i
				continue
			}
			if ro.issues.duplicates == nil {
				ro.issues.duplicates = map[string][]int{}
			}
			if _, found := ro.issues.duplicates[app.Name]; !found {
				ro.issues.duplicates[app.Name] = []int{first}
			}
			ro.issues.duplicates[app.Name] = append(ro.issues.duplicates[app.Name], i)
		}
	}
	for i, names := range ro.byStep {
		if len(names) == 0 {
			ro.issues.emptySteps = append(ro.issues.emptySteps, i)
		}
	}
	return ro
}

// selects reports whether step i selects an Application of labels,
// recording an invalid operator.
func (ro *rollout) selects(i int, step v1alpha1.ApplicationSetRolloutStep, labels map[string]string) bool {
	for _, e := range step.MatchExpressions {
		val, ok := labels[e.Key]
		if !ok {
			if e.Operator == "In" {
				return false
			}
			continue
		}
		matched, valid := matchExpression(val, e)
		if !valid {
			ro.issues.addOperator(i, e.Operator)
			return false
		}
		if !matched {
			return false
		}
	}
	return true
}

// matchExpression matches a label's value: In when it is one of the
// values, NotIn when it is none; valid is false for another operator.
func matchExpression(val string, e v1alpha1.ApplicationMatchExpression) (matched, valid bool) {
	if e.Operator != "In" && e.Operator != "NotIn" {
		return false, false
	}
	return slices.Contains(e.Values, val) == (e.Operator == "In"), true
}

// step is the 1-based step of an Application, "-1" when no step selects
// it.
func (ro *rollout) step(name string) string {
	if i, ok := ro.stepOf[name]; ok {
		return strconv.Itoa(i + 1)
	}
	return "-1"
}

// revisions are the revisions an Application was last compared at, as
// Argo CD's ApplicationStatus.GetRevisions.
func revisions(app *v1alpha1.Application) []string {
	if len(app.Status.Sync.Revisions) > 0 {
		return app.Status.Sync.Revisions
	}
	if app.Status.Sync.Revision != "" {
		return []string{app.Status.Sync.Revision}
	}
	return []string{}
}

// appError reports whether an Application has a condition that keeps it
// from syncing (InvalidSpecError, UnknownError).
func appError(app *v1alpha1.Application) bool {
	return slices.ContainsFunc(app.Status.Conditions, func(c v1alpha1.ApplicationCondition) bool {
		return c.Type == v1alpha1.ApplicationConditionInvalidSpecError || c.Type == v1alpha1.ApplicationConditionUnknownError
	})
}

// notBefore reports whether t is at or after since. Both come from the
// API at a one-second resolution: an operation that started in the second
// its Application became Pending counts.
func notBefore(t *metav1.Time, since *metav1.Time) bool {
	return since == nil || (t != nil && !t.Before(since))
}

// updateStatuses computes each live Application's state from its last
// one (prev), as Argo CD's updateApplicationSetApplicationStatus.
// specChanged reports whether the generated spec differs from the live
// one; an Application no longer live loses its entry.
func (ro *rollout) updateStatuses(prev []v1alpha1.ApplicationSetApplicationStatus, live []v1alpha1.Application, specChanged func(*v1alpha1.Application) bool, now metav1.Time) {
	old := map[string]v1alpha1.ApplicationSetApplicationStatus{}
	for _, s := range prev {
		old[s.Application] = s
	}
	out := make([]v1alpha1.ApplicationSetApplicationStatus, 0, len(live))
	for i := range live {
		app := &live[i]
		cur, found := old[app.Name]
		if !found {
			cur = v1alpha1.ApplicationSetApplicationStatus{Application: app.Name, TargetRevisions: revisions(app),
				LastTransitionTime: &now, Message: msgNoStatus, Status: v1alpha1.ProgressiveSyncWaiting}
		}
		out = append(out, ro.nextStatus(cur, app, specChanged(app), now))
	}
	slices.SortFunc(out, func(a, b v1alpha1.ApplicationSetApplicationStatus) int {
		return strings.Compare(a.Application, b.Application)
	})
	ro.statuses = out
}

// nextStatus is one Application's next state from cur.
func (ro *rollout) nextStatus(cur v1alpha1.ApplicationSetApplicationStatus, app *v1alpha1.Application, specChanged bool, now metav1.Time) v1alpha1.ApplicationSetApplicationStatus {
	next := *cur.DeepCopy()
	next.Step = ro.step(app.Name)
	set := func(status v1alpha1.ProgressiveSyncStatusCode, msg string) {
		next.Status, next.Message, next.LastTransitionTime = status, msg, &now
	}
	synced := app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	healthy := app.Status.Health.Status == v1alpha1.HealthStatusHealthy
	revChanged := !slices.Equal(cur.TargetRevisions, revisions(app))
	if revChanged || specChanged {
		next.TargetRevisions = revisions(app)
		switch {
		case revChanged && specChanged:
			set(v1alpha1.ProgressiveSyncWaiting, msgRevisionAndSpec)
		case revChanged:
			set(v1alpha1.ProgressiveSyncWaiting, msgRevision)
		default:
			set(v1alpha1.ProgressiveSyncWaiting, msgSpec)
		}
	}
	if next.Status == v1alpha1.ProgressiveSyncWaiting {
		// Nothing to sync: it already is.
		switch {
		case synced && healthy:
			set(v1alpha1.ProgressiveSyncHealthy, msgSyncedHealthy)
		case synced:
			set(v1alpha1.ProgressiveSyncProgressing, msgSyncedProgressing)
		}
		return next
	}
	if cur.Status == v1alpha1.ProgressiveSyncPending && notBefore(app.Status.ReconciledAt, next.LastTransitionTime) {
		op := app.Status.OperationState
		switch {
		case op != nil && notBefore(&op.StartedAt, cur.LastTransitionTime):
			msg := msgSyncStarted
			if op.Phase.Successful() {
				msg = msgSyncSucceeded
			} else if op.Phase.Completed() {
				msg = msgSyncCompleted
			}
			set(v1alpha1.ProgressiveSyncProgressing, msg)
		case appError(app):
			set(v1alpha1.ProgressiveSyncProgressing, msgAppError)
		}
	}
	switch {
	case cur.Status == v1alpha1.ProgressiveSyncProgressing && synced && healthy:
		set(v1alpha1.ProgressiveSyncHealthy, msgBecameHealthy)
	case next.Status == v1alpha1.ProgressiveSyncProgressing && synced && healthy:
		ro.again = true
	}
	return next
}

// allowSync marks the Applications of the first step and of each later
// step whose steps before it are all live and Healthy, as Argo CD's
// getAppsToSync.
func (ro *rollout) allowSync(live []v1alpha1.Application) {
	exists := map[string]bool{}
	for _, a := range live {
		exists[a.Name] = true
	}
	status := map[string]v1alpha1.ProgressiveSyncStatusCode{}
	for _, s := range ro.statuses {
		status[s.Application] = s.Status
	}
	ro.toSync = map[string]bool{}
	for _, names := range ro.byStep {
		for _, n := range names {
			ro.toSync[n] = true
		}
		for _, n := range names {
			if !exists[n] || status[n] != v1alpha1.ProgressiveSyncHealthy {
				return
			}
		}
	}
}

// maxUpdate is how many of a step's total Applications may be Pending or
// Progressing at once, as Argo CD computes it: unset is no limit (-1); a
// percentage is rounded down, but at least 1 unless it is "0%"; an
// invalid value is recorded and counts as 0 (1 for a string).
func (ro *rollout) maxUpdate(step, total int) int {
	mu := ro.steps[step].MaxUpdate
	if mu == nil {
		return -1
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(mu, total, false)
	if err != nil {
		ro.issues.addMaxUpdate(step, mu)
	}
	if mu.Type == intstr.String && mu.StrVal != "0%" && n < 1 {
		n = 1
	}
	return n
}

// promote moves the Waiting Applications allowed to sync to Pending, in
// name order, while their step has fewer than maxUpdate Pending or
// Progressing, as Argo CD's updateApplicationSetApplicationStatusProgress.
// An Application no step selects is counted in the first step, as there.
func (ro *rollout) promote(now metav1.Time) {
	if len(ro.steps) == 0 {
		return
	}
	total, updating := make([]int, len(ro.steps)), make([]int, len(ro.steps))
	for _, s := range ro.statuses {
		i := ro.stepOf[s.Application]
		total[i]++
		if s.Status == v1alpha1.ProgressiveSyncPending || s.Status == v1alpha1.ProgressiveSyncProgressing {
			updating[i]++
		}
	}
	for k := range ro.statuses {
		s := &ro.statuses[k]
		i := ro.stepOf[s.Application]
		limit := ro.maxUpdate(i, total[i])
		allowed := limit < 0 || updating[i] < limit
		if s.Status == v1alpha1.ProgressiveSyncWaiting && ro.toSync[s.Application] && allowed {
			s.Status, s.Message, s.LastTransitionTime = v1alpha1.ProgressiveSyncPending, msgPending, &now
			updating[i]++
		}
	}
}

// pending are the Applications whose sync is to be requested.
func (ro *rollout) pending() []v1alpha1.ApplicationSetApplicationStatus {
	var out []v1alpha1.ApplicationSetApplicationStatus
	for _, s := range ro.statuses {
		if s.Status == v1alpha1.ProgressiveSyncPending && ro.toSync[s.Application] {
			out = append(out, s)
		}
	}
	return out
}

// conditions are InvalidRolloutConfig and RolloutProgressing, as Argo CD
// sets them: the first step with an Application that is not Healthy is
// in progress.
func (ro *rollout) conditions() []v1alpha1.ApplicationSetCondition {
	cond := func(t v1alpha1.ApplicationSetConditionType, s v1alpha1.ApplicationSetConditionStatus, reason, msg string) v1alpha1.ApplicationSetCondition {
		return v1alpha1.ApplicationSetCondition{Type: t, Status: s, Reason: reason, Message: msg}
	}
	config := cond(v1alpha1.ApplicationSetConditionInvalidRolloutConfig, v1alpha1.ApplicationSetConditionStatusFalse,
		v1alpha1.ApplicationSetReasonValidRolloutConfig, msgRolloutConfigured)
	if msg := ro.issues.message(); msg != "" {
		config = cond(v1alpha1.ApplicationSetConditionInvalidRolloutConfig, v1alpha1.ApplicationSetConditionStatusTrue,
			v1alpha1.ApplicationSetReasonInvalidRolloutConfig, msg)
	}
	done := map[string]bool{}
	for _, s := range ro.statuses {
		healthy := s.Status == v1alpha1.ProgressiveSyncHealthy
		if v, ok := done[s.Step]; ok {
			healthy = v && healthy
		}
		done[s.Step] = healthy
	}
	for i := range ro.steps {
		step := strconv.Itoa(i + 1)
		if complete, ok := done[step]; ok && !complete {
			return []v1alpha1.ApplicationSetCondition{config, cond(v1alpha1.ApplicationSetConditionRolloutProgressing,
				v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonApplicationSetModified, msgRolloutOfStepPrefix+step)}
		}
	}
	return []v1alpha1.ApplicationSetCondition{config, cond(v1alpha1.ApplicationSetConditionRolloutProgressing,
		v1alpha1.ApplicationSetConditionStatusFalse, v1alpha1.ApplicationSetReasonApplicationSetRolloutComplete, msgRolloutComplete)}
}

// rolloutIssues are what is wrong with the steps, reported in
// InvalidRolloutConfig with Argo CD's messages (0-based steps here).
type rolloutIssues struct {
	operators  []stepValue
	duplicates map[string][]int
	maxUpdates []stepValue
	emptySteps []int
}

// stepValue is a step and the value found wrong in it.
type stepValue struct {
	step  int
	value string
}

func (is *rolloutIssues) addOperator(step int, op string) {
	if !slices.Contains(is.operators, stepValue{step, op}) {
		is.operators = append(is.operators, stepValue{step, op})
	}
}

func (is *rolloutIssues) addMaxUpdate(step int, mu *intstr.IntOrString) {
	if !slices.ContainsFunc(is.maxUpdates, func(v stepValue) bool { return v.step == step }) {
		is.maxUpdates = append(is.maxUpdates, stepValue{step, mu.String()})
	}
}

// message is the first kind of issue found, "" for none: operators,
// duplicate selections, maxUpdate values, empty steps.
func (is *rolloutIssues) message() string {
	oneBased := func(steps []int) []string {
		out := make([]string, len(steps))
		for i, s := range steps {
			out[i] = strconv.Itoa(s + 1)
		}
		return out
	}
	split := func(vs []stepValue) (steps, values []string) {
		for _, v := range vs {
			steps, values = append(steps, strconv.Itoa(v.step+1)), append(values, v.value)
		}
		return steps, values
	}
	switch {
	case len(is.operators) == 1:
		return fmt.Sprintf("Step %d has invalid matchExpression operators: %s. Supported Operators are 'In' and 'NotIn'", is.operators[0].step+1, is.operators[0].value)
	case len(is.operators) > 1:
		steps, ops := split(is.operators)
		return fmt.Sprintf("Steps %s have invalid matchExpression operators: %s. Supported Operators are 'In' and 'NotIn'", strings.Join(steps, ", "), strings.Join(ops, ", "))
	case len(is.duplicates) > 0:
		names := slices.Sorted(maps.Keys(is.duplicates))
		var steps []string
		for _, n := range names {
			steps = append(steps, strings.Join(oneBased(is.duplicates[n]), "-"))
		}
		if len(names) == 1 {
			return fmt.Sprintf("Application '%s' is selected by multiple steps: (%s)", names[0], steps[0])
		}
		return fmt.Sprintf("Applications '%s' are selected by multiple steps: [(%s)]", strings.Join(names, "', '"), strings.Join(steps, "), ("))
	case len(is.maxUpdates) == 1:
		return fmt.Sprintf("Step %d has an invalid maxUpdate value: %s", is.maxUpdates[0].step+1, is.maxUpdates[0].value)
	case len(is.maxUpdates) > 1:
		steps, values := split(is.maxUpdates)
		return fmt.Sprintf("Steps %s have invalid maxUpdate values: [%s]", strings.Join(steps, ", "), strings.Join(values, ", "))
	case len(is.emptySteps) > 0:
		return fmt.Sprintf("Steps %v have no applications matching their criteria", oneBased(is.emptySteps))
	}
	return ""
}
