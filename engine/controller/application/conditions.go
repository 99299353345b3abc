package application

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// step names the step of a pass an outcome comes from.
type step int

const (
	// stepNone is the zero outcome's: it found nothing.
	stepNone step = iota
	// stepSpec checked the Application's namespace against its project,
	// the destination, the sources and the project's scoped clusters.
	stepSpec
	// stepRefused refused a requested operation before it ran.
	stepRefused
	// stepFailed could not make the comparison: the destination, a
	// repository, a signature, a render, the gate or a dry run failed.
	stepFailed
	// stepGate is the policy gate's verdict: before anything is fetched
	// (only a denial), or on the rendered objects.
	stepGate
	// stepBuilt built the desired objects for a full comparison.
	stepBuilt
	// stepCompared made a comparison, or reused the last one.
	stepCompared
	// stepWindows looked at the project's sync windows for a sync due.
	stepWindows
	// stepSync ran a sync to its end (or to a retry).
	stepSync
	// stepDeletion found the Application's deletion stuck.
	stepDeletion
)

// outcome is what one step of a pass found that shows in the Application's
// conditions: the conditions it raises, type to message. Which conditions
// it clears is not the step's to say: see clears. The zero outcome found
// nothing and changes nothing.
type outcome struct {
	step   step
	raised map[string]string
}

// raise is the outcome of step s raising one condition.
func raise(s step, typ, msg string) outcome {
	return outcome{step: s, raised: map[string]string{typ: msg}}
}

// failed is the outcome of a step that could not make the comparison.
func failed(err error) outcome {
	return raise(stepFailed, v1alpha1.ApplicationConditionComparisonError, err.Error())
}

// clearRule is a condition type a step's outcome clears when it does not
// raise it.
type clearRule struct {
	typ string
	// prefix, when set, clears only a condition whose message, as the pass
	// read it, starts with prefix: the same type raised by another step
	// stays.
	prefix string
}

// clears says which step owns which condition type: the outcome of each
// step listed clears the types listed for it that it does not raise; a
// step not listed clears nothing. All in one table:
//
//	condition                raised by                    cleared by
//	InvalidSpecError         stepSpec: spec invalid       stepSpec: destination and sources valid
//	UnknownError             stepSpec: namespace not      stepSpec: namespace permitted
//	                         permitted by the project
//	ComparisonError          stepFailed                   stepCompared
//	PolicyViolation          stepGate: a denial           stepGate: the rendered objects allowed
//	SyncError                stepRefused;                 stepGate: allowed, if a refusal by policy;
//	                         stepGate: a denial;          stepWindows: allowed, if their block;
//	                         stepWindows: sync blocked;   stepSync: succeeded
//	                         stepSync: failed, retrying
//	                         or terminated
//	UnknownHookWarning       stepBuilt                    stepBuilt
//	ExcludedResourceWarning  stepBuilt                    stepBuilt
//	SharedResourceWarning    stepCompared                 stepCompared
//	DeletionError            stepDeletion                 never (the Application is going)
//
// A pass that reuses its last comparison has no stepBuilt and no stepGate
// outcome: their conditions stay as the full comparison left them.
var clears = map[step][]clearRule{
	stepSpec: {{typ: v1alpha1.ApplicationConditionInvalidSpecError}, {typ: v1alpha1.ApplicationConditionUnknownError}},
	stepGate: {
		{typ: v1alpha1.ApplicationConditionPolicyViolation},
		{typ: v1alpha1.ApplicationConditionSyncError, prefix: refusedByPolicy},
	},
	stepBuilt: {
		{typ: v1alpha1.ApplicationConditionUnknownHookWarning},
		{typ: v1alpha1.ApplicationConditionExcludedResourceWarning},
	},
	stepCompared: {
		{typ: v1alpha1.ApplicationConditionComparisonError},
		{typ: v1alpha1.ApplicationConditionSharedResourceWarning},
	},
	stepWindows: {{typ: v1alpha1.ApplicationConditionSyncError, prefix: blockedByWindow}},
	stepSync:    {{typ: v1alpha1.ApplicationConditionSyncError}},
}

// applyOutcomes sets the Application's conditions, conds as the pass read
// them, from the outcomes of the pass's steps in the order the steps ran:
// each outcome raises its conditions and clears what clears gives its
// step, and a later outcome's word on a type overrides an earlier one's.
// A prefix rule looks at conds, not at what an earlier outcome raised. It
// is the only place conditions are set. It returns the conditions and the
// types that were added or whose message changed (conditionEdits.apply).
func applyOutcomes(conds []v1alpha1.ApplicationCondition, outs []outcome, now metav1.Time) ([]v1alpha1.ApplicationCondition, []string) {
	edits := conditionEdits{}
	for _, o := range outs {
		for typ, msg := range o.raised {
			edits.set(typ, msg)
		}
		for _, c := range clears[o.step] {
			if _, ok := o.raised[c.typ]; ok {
				continue
			}
			if msg, ok := conditionMessage(conds, c.typ); c.prefix != "" && (!ok || !strings.HasPrefix(msg, c.prefix)) {
				continue
			}
			edits.clear(c.typ)
		}
	}
	return edits.apply(conds, now)
}

// raisedMessage returns the message of the last condition of type typ
// raised in outs, or typ when none was.
func raisedMessage(outs []outcome, typ string) string {
	msg := typ
	for _, o := range outs {
		if m, ok := o.raised[typ]; ok {
			msg = m
		}
	}
	return msg
}

// maxConditionMessage bounds a condition message; long lists are cut.
const maxConditionMessage = 8 << 10

// conditionEdits are the condition changes applyOutcomes decided: a type
// mapped to its message, or to nil to remove it. Types not mentioned are
// left as they are.
type conditionEdits map[string]*string

func (e conditionEdits) set(typ, msg string) {
	if len(msg) > maxConditionMessage {
		msg = msg[:maxConditionMessage] + "\n... (truncated)"
	}
	e[typ] = &msg
}

func (e conditionEdits) clear(typ string) { e[typ] = nil }

// apply merges the edits into conds. A condition whose message did not
// change keeps its lastTransitionTime. The result is sorted by type. It
// also returns the types that were added or whose message changed.
func (e conditionEdits) apply(conds []v1alpha1.ApplicationCondition, now metav1.Time) ([]v1alpha1.ApplicationCondition, []string) {
	var out []v1alpha1.ApplicationCondition
	var changed []string
	seen := map[string]bool{}
	for _, c := range conds {
		edit, ok := e[c.Type]
		seen[c.Type] = true
		switch {
		case !ok:
			out = append(out, c)
		case edit == nil:
		case *edit == c.Message:
			out = append(out, c)
		default:
			out = append(out, v1alpha1.ApplicationCondition{Type: c.Type, Message: *edit, LastTransitionTime: &now})
			changed = append(changed, c.Type)
		}
	}
	for typ, edit := range e {
		if seen[typ] || edit == nil {
			continue
		}
		out = append(out, v1alpha1.ApplicationCondition{Type: typ, Message: *edit, LastTransitionTime: &now})
		changed = append(changed, typ)
	}
	slices.SortStableFunc(out, func(a, b v1alpha1.ApplicationCondition) int {
		switch {
		case a.Type < b.Type:
			return -1
		case a.Type > b.Type:
			return 1
		}
		return 0
	})
	slices.Sort(changed)
	return out, changed
}

// conditionMessage returns the message of the condition of type typ in
// conds.
func conditionMessage(conds []v1alpha1.ApplicationCondition, typ string) (string, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c.Message, true
		}
	}
	return "", false
}
