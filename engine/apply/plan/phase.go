package plan

// Phase is the step of a sync a task runs in.
type Phase string

// Phases, in the order they run. SyncFail runs only when an earlier phase
// failed; PreDelete and PostDelete belong to the Application's deletion and
// never run in a sync.
const (
	PhasePreSync    Phase = "PreSync"
	PhaseSync       Phase = "Sync"
	PhasePostSync   Phase = "PostSync"
	PhaseSyncFail   Phase = "SyncFail"
	PhasePreDelete  Phase = "PreDelete"
	PhasePostDelete Phase = "PostDelete"
)

// phaseOrder ranks the phases for sorting.
var phaseOrder = map[Phase]int{
	PhasePreSync:    0,
	PhaseSync:       1,
	PhasePostSync:   2,
	PhaseSyncFail:   3,
	PhasePreDelete:  4,
	PhasePostDelete: 5,
}

// OnSync reports whether p runs in a normal sync (PreSync, Sync, PostSync).
func (p Phase) OnSync() bool {
	return p == PhasePreSync || p == PhaseSync || p == PhasePostSync
}

// Select returns the waves whose phase is one of phases, in their order.
func Select(waves []Wave, phases ...Phase) []Wave {
	var out []Wave
	for _, w := range waves {
		for _, p := range phases {
			if w.Phase == p {
				out = append(out, w)
				break
			}
		}
	}
	return out
}
