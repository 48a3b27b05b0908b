package observe

import (
	"sync"
	"sync/atomic"
)

// maxToolLabels bounds the distinct values of the tool label. Tool names
// come from the catalog (the runtime rejects unknown names before any
// middleware), and a reload forgets the names it removed
// ([Metrics.Retire]), but one catalog may hold more tools than Prometheus
// should carry series for; past the cap, new names are counted as
// [OtherTool].
const maxToolLabels = 10_000

// OtherTool is the tool label of calls to tools first seen after the
// label cap (10,000 distinct tool names) was reached, and of every call an
// access list denied (its tool name would tell a hidden tool's existence).
const OtherTool = "other"

// toolLabels hands out tool label values, at most max distinct ones.
type toolLabels struct {
	max  int
	seen sync.Map // tool name → struct{}
	full atomic.Bool

	mu sync.Mutex
	n  int // entries in seen; guarded by mu
}

func newToolLabels(max int) *toolLabels { return &toolLabels{max: max} }

// of is the label value for a call to the tool name.
func (l *toolLabels) of(name string) string {
	if _, ok := l.seen.Load(name); ok {
		return name
	}
	if l.full.Load() {
		return OtherTool
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen.Load(name); ok {
		return name
	}
	if l.n >= l.max {
		l.full.Store(true)
		return OtherTool
	}
	l.seen.Store(name, struct{}{})
	l.n++
	return name
}

// forget drops the names live does not keep ([OtherTool] always stays),
// so that their label slots serve new names.
func (l *toolLabels) forget(live func(name string) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gone []string
	l.seen.Range(func(k, _ any) bool {
		if name := k.(string); name != OtherTool && !live(name) {
			gone = append(gone, name)
		}
		return true
	})
	for _, name := range gone {
		l.seen.Delete(name)
		l.n--
	}
	if l.n < l.max {
		l.full.Store(false)
	}
}
