package accounts

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/testcampaign/kit/sandbox"
)

// Faults is an account's planned faults, in the order they were planned.
type Faults struct {
	mu      sync.Mutex
	planned []*plannedFault
	// made numbers the faults, so that the IDs of a session repeat.
	made int
	// bytes is what the planned faults hold, as FaultSpec.Bytes counts
	// them; meter, if set, is charged for them.
	bytes int
	meter faultMeter
}

// faultMeter is the memory budget a plan is charged to: Charge may refuse,
// as a write that does not fit is refused.
type faultMeter interface {
	Charge(n int64) error
	Release(n int64)
}

type plannedFault struct {
	sandbox.Fault
	// draws decides which matching requests a fault with a rate hits: the
	// same seed hits the same requests of the same sequence.
	draws *rand.Rand
}

// Add plans a fault after those already planned. An account holds at most
// sandbox.MaxFaults, of sandbox.MaxFaultPlanBytes in all; past either, or
// past the memory budget, it returns LIMIT_REACHED.
func (f *Faults) Add(spec sandbox.FaultSpec) (sandbox.Fault, error) {
	size := spec.Bytes()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.planned) >= sandbox.MaxFaults {
		return sandbox.Fault{}, sandbox.Errorf(sandbox.ErrLimitReached,
			"the account already has %d faults planned; clear them with DELETE /_sandbox/faults", sandbox.MaxFaults)
	}
	if f.bytes+size > sandbox.MaxFaultPlanBytes {
		return sandbox.Fault{}, sandbox.Errorf(sandbox.ErrLimitReached,
			"the account's planned faults would hold %d bytes, past the %d an account may plan; clear them with DELETE /_sandbox/faults, or plan smaller bodies and headers", f.bytes+size, sandbox.MaxFaultPlanBytes)
	}
	if f.meter != nil {
		// The meter takes the registry's lock, which is never held while
		// a plan's is taken.
		if err := f.meter.Charge(int64(size)); err != nil {
			return sandbox.Fault{}, err
		}
	}
	f.bytes += size
	f.made++
	p := &plannedFault{Fault: sandbox.Fault{ID: fmt.Sprintf("flt_%06d", f.made), FaultSpec: spec}}
	if spec.Count > 0 {
		left := spec.Count
		p.Left = &left
	}
	if spec.Rate < 1 {
		p.draws = rand.New(rand.NewPCG(spec.Seed, 0))
	}
	f.planned = append(f.planned, p)
	return p.snapshot(), nil
}

// List returns the faults still planned, oldest first.
func (f *Faults) List() []sandbox.Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := make([]sandbox.Fault, 0, len(f.planned))
	for _, p := range f.planned {
		list = append(list, p.snapshot())
	}
	return list
}

// Clear drops every planned fault and returns how many there were.
func (f *Faults) Clear() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.planned)
	f.planned = nil
	f.release(f.bytes)
	return n
}

// release gives back what a dropped fault held; f.mu is held.
func (f *Faults) release(n int) {
	f.bytes -= n
	if f.meter != nil {
		f.meter.Release(int64(n))
	}
}

// RequestFaultsPlanned reports whether a fault is planned on requests, and
// DeliveryFaultsPlanned whether one is planned on webhook deliveries, so
// that the requests and the events of an account without such faults pay
// for nothing more.
func (f *Faults) RequestFaultsPlanned() bool {
	return f.anyPlanned(func(p *plannedFault) bool { return p.Event == "" })
}

func (f *Faults) DeliveryFaultsPlanned() bool {
	return f.anyPlanned(func(p *plannedFault) bool { return p.Event != "" })
}

func (f *Faults) anyPlanned(of func(*plannedFault) bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.ContainsFunc(f.planned, of)
}

// Take returns the fault that hits a request, if any: the oldest one that
// matches it and whose rate, if it has one, draws it. A fault that has hit
// as many requests as it was planned for is dropped.
func (f *Faults) Take(method, path string) (sandbox.Fault, bool) {
	return f.take(func(p *plannedFault) bool { return p.Matches(method, path) })
}

// TakeDelivery returns the webhook fault that hits a delivery of an event of
// the given type, if any, as Take does for requests.
func (f *Faults) TakeDelivery(eventType string) (sandbox.Fault, bool) {
	return f.take(func(p *plannedFault) bool { return p.MatchesDelivery(eventType) })
}

func (f *Faults) take(matches func(*plannedFault) bool) (sandbox.Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.planned {
		if !matches(p) || (p.draws != nil && p.draws.Float64() >= p.Rate) {
			continue
		}
		p.Fired++
		if p.Left != nil {
			*p.Left--
			if *p.Left == 0 {
				f.planned = append(f.planned[:i:i], f.planned[i+1:]...)
				f.release(p.Bytes())
			}
		}
		return p.snapshot(), true
	}
	return sandbox.Fault{}, false
}

// snapshot copies the fault, so that what is returned no longer changes.
func (p *plannedFault) snapshot() sandbox.Fault {
	fault := p.Fault
	if p.Left != nil {
		left := *p.Left
		fault.Left = &left
	}
	return fault
}
