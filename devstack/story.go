package devstack

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/webhook"
)

// storyPoll is how often Story looks at the Applications.
const storyPoll = 300 * time.Millisecond

// storyConditions are the conditions Story tells about.
var storyConditions = []string{
	v1alpha1.ApplicationConditionPolicyViolation,
	v1alpha1.ApplicationConditionSyncError,
	v1alpha1.ApplicationConditionComparisonError,
	v1alpha1.ApplicationConditionInvalidSpecError,
}

// appView is what Story last told about one Application.
type appView struct {
	sync, health, revision string
	opStarted              time.Time
	opPhase                v1alpha1.OperationPhase
	conditions             map[string]string
}

// story tells what happens to the Applications; see Stack.Story.
type story struct {
	mu   sync.Mutex
	c    client.Client
	con  *Console
	seen map[string]*appView
}

// StartStory tells, in the background until ctx ends, what happens to the
// Applications of the Argo CD namespace: each sync with the objects it
// applied per phase and wave, sync and health status as they change, and
// every refusal by policy with rule id, object and message, as the engine
// wrote them.
func (s *Stack) StartStory(ctx context.Context, con *Console) {
	st := &story{c: s.Client, con: con, seen: map[string]*appView{}}
	s.story = st
	go func() {
		t := time.NewTicker(storyPoll)
		defer t.Stop()
		for {
			st.tell(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// catchUp tells what happened so far, so that the tour's narration follows
// the story instead of running ahead of it.
func (s *Stack) catchUp(ctx context.Context) {
	if s.story != nil {
		s.story.tell(ctx)
	}
}

// tell looks at every Application once and prints what changed.
func (st *story) tell(ctx context.Context) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var list v1alpha1.ApplicationList
	if err := st.c.List(ctx, &list, client.InNamespace(ArgoCDNamespace)); err != nil {
		return
	}
	for i := range list.Items {
		app := &list.Items[i]
		v := st.seen[app.Name]
		if v == nil {
			v = &appView{conditions: map[string]string{}}
			st.seen[app.Name] = v
		}
		tellApp(st.con, app, v)
	}
}

// tellApp prints what changed in app since v, and updates v.
func tellApp(con *Console, app *v1alpha1.Application, v *appView) {
	name := app.Name
	if op := app.Status.OperationState; op != nil && (!op.StartedAt.Time.Equal(v.opStarted) || op.Phase != v.opPhase) {
		if op.Phase == v1alpha1.OperationRunning {
			con.Printf("  %-15s sync started (%s)", name, initiator(op.Operation))
		} else if !op.StartedAt.Time.Equal(v.opStarted) || v.opPhase == v1alpha1.OperationRunning {
			con.Printf("  %-15s sync %s: %s", name, strings.ToLower(string(op.Phase)), strings.TrimSuffix(firstLine(op.Message), ":"))
			for _, line := range syncSteps(app, op) {
				con.Printf("  %-15s   %s", "", line)
			}
		}
		v.opStarted, v.opPhase = op.StartedAt.Time, op.Phase
	}
	for _, typ := range storyConditions {
		msg := conditionMessage(app, typ)
		if typ == v1alpha1.ApplicationConditionSyncError && conditionMessage(app, v1alpha1.ApplicationConditionPolicyViolation) != "" {
			msg = v.conditions[typ] // the same refusal, told once as PolicyViolation
		}
		if msg == v.conditions[typ] {
			continue
		}
		switch {
		case msg == "":
			con.Printf("  %-15s %s cleared", name, typ)
		case typ == v1alpha1.ApplicationConditionPolicyViolation:
			con.Printf("  %-15s REFUSED by policy, nothing applied:\n%s", name, indent(msg, "                    "))
		default:
			con.Printf("  %-15s %s: %s", name, typ, msg)
		}
		v.conditions[typ] = msg
	}
	sync, health, rev := string(app.Status.Sync.Status), string(app.Status.Health.Status), app.Status.Sync.Revision
	// A new revision alone is not news: every commit moves every
	// Application of the repository.
	if sync != v.sync || health != v.health {
		if sync != "" || health != "" {
			con.Printf("  %-15s %s, %s (revision %s)", name, orUnknown(sync), orUnknown(health), short(rev))
		}
		v.sync, v.health, v.revision = sync, health, rev
	}
}

// syncSteps lists the objects a finished sync touched, phase by phase and
// wave by wave, as "PreSync: Job/billing-db-migrate (hook)" and
// "Sync wave 1: Deployment/billing-api, Service/billing-api".
func syncSteps(app *v1alpha1.Application, op *v1alpha1.OperationState) []string {
	if op.SyncResult == nil {
		return nil
	}
	waves := map[string]int64{}
	for _, r := range app.Status.Resources {
		waves[r.Group+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name] = r.SyncWave
	}
	type step struct {
		phase string
		wave  int64
	}
	objs := map[step][]string{}
	for _, r := range op.SyncResult.Resources {
		st := step{phase: string(r.SyncPhase), wave: waves[r.Group+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name]}
		if st.phase == "" {
			st.phase = string(v1alpha1.SyncPhaseSync)
		}
		obj := r.Kind + "/" + r.Name
		switch {
		case r.HookType != "":
			obj += fmt.Sprintf(" (%s hook, %s)", r.HookType, strings.ToLower(string(r.HookPhase)))
		case r.Status != "" && r.Status != v1alpha1.ResultCodeSynced:
			obj += fmt.Sprintf(" (%s)", r.Status)
		}
		objs[st] = append(objs[st], obj)
	}
	steps := make([]step, 0, len(objs))
	for st := range objs {
		steps = append(steps, st)
	}
	order := []string{string(v1alpha1.SyncPhasePreSync), string(v1alpha1.SyncPhaseSync), string(v1alpha1.SyncPhasePostSync), string(v1alpha1.SyncPhaseSyncFail)}
	sort.Slice(steps, func(i, j int) bool {
		pi, pj := slices.Index(order, steps[i].phase), slices.Index(order, steps[j].phase)
		if pi != pj {
			return pi < pj
		}
		return steps[i].wave < steps[j].wave
	})
	lines := make([]string, 0, len(steps))
	for _, st := range steps {
		lines = append(lines, fmt.Sprintf("%s wave %d: %s", st.phase, st.wave, strings.Join(objs[st], ", ")))
	}
	return lines
}

func conditionMessage(app *v1alpha1.Application, typ string) string {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

func initiator(op v1alpha1.Operation) string {
	switch {
	case op.InitiatedBy.Automated:
		return "automated"
	case op.InitiatedBy.Username != "":
		return "requested by " + op.InitiatedBy.Username
	}
	return "requested"
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

// short abbreviates a commit SHA.
func short(rev string) string {
	if len(rev) > 7 {
		return rev[:7]
	}
	if rev == "" {
		return "none"
	}
	return rev
}

// TellDenials wraps the webhook's decisions so that the story tells every
// request d denies: operation, kind, object, user and the rule messages.
func TellDenials(d webhook.Decider, con *Console) webhook.Decider {
	return webhook.DeciderFunc(func(ctx context.Context, req admission.Request) (admission.Response, error) {
		resp, err := d.Decide(ctx, req)
		if err != nil || resp.Allowed || resp.Result == nil || resp.Result.Code >= 500 {
			return resp, err
		}
		obj := req.Name
		if req.Namespace != "" {
			obj = req.Namespace + "/" + req.Name
		}
		con.Printf("  %-15s DENIED %s %s %s (%s):\n%s", "webhook", strings.ToLower(string(req.Operation)), req.Kind.Kind, obj,
			req.UserInfo.Username, indent(resp.Result.Message, "                    "))
		return resp, nil
	})
}
