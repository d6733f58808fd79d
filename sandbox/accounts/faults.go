package accounts

import (
	"sync"

	"github.com/testcampaign/kit/sandbox"
)

// Faults is an account's plan of failures for its next API requests.
type Faults struct {
	mu   sync.Mutex
	plan sandbox.FaultPlan
}

// Set replaces the plan.
func (f *Faults) Set(plan sandbox.FaultPlan) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plan = plan
}

// Take uses up one planned fault, if one is left.
func (f *Faults) Take() (sandbox.FaultPlan, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plan.Count == 0 {
		return sandbox.FaultPlan{}, false
	}
	f.plan.Count--
	return f.plan, true
}
