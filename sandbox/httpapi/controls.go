package httpapi

import (
	"net/http"

	"github.com/testcampaign/kit/sandbox"
)

// resetAccount replaces the caller's account with a freshly seeded one: its
// records, clock, rate-limit counts, planned faults, request log and pending
// webhook deliveries all start over, as for a new key.
func (s *Server) resetAccount(r *http.Request) (any, error) {
	s.accounts.Reset(accountOf(r))
	return map[string]bool{"reset": true}, nil
}

// fileBug simulates a tester filing a bug, which the API itself cannot do.
func (s *Server) fileBug(r *http.Request) (any, error) {
	in, err := parseBody(r, sandbox.ParseBugInput)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.FileBug(r.Context(), in)
}

func (s *Server) listEvents(r *http.Request) (any, error) {
	page, err := pageRequest(r)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.Events(r.Context(), page)
}

func (s *Server) listDeliveries(r *http.Request) (any, error) {
	page, err := pageRequest(r)
	if err != nil {
		return nil, err
	}
	outbox := accountOf(r).Outbox
	if outbox == nil {
		return sandbox.NewPage[sandbox.Delivery](nil, false, 0), nil
	}
	return outbox.Deliveries(page), nil
}

func (s *Server) listRequests(r *http.Request) (any, error) {
	return sandbox.NewPage(accountOf(r).Requests.Recent(), false, 0), nil
}

func (s *Server) planFaults(r *http.Request) (any, error) {
	plan, err := parseBody(r, sandbox.ParseFaultPlan)
	if err != nil {
		return nil, err
	}
	accountOf(r).Faults.Set(plan)
	return plan, nil
}

// moveClock advances the caller's account's frozen clock; other accounts'
// clocks do not move.
func (s *Server) moveClock(r *http.Request) (any, error) {
	frozen := accountOf(r).Frozen
	if frozen == nil {
		return nil, sandbox.Errorf(sandbox.ErrConflict, "the clock is not frozen; start the sandbox with -frozen-clock to move it")
	}
	d, err := parseBody(r, sandbox.ParseClockMove)
	if err != nil {
		return nil, err
	}
	return map[string]sandbox.Time{"now": sandbox.At(frozen.Advance(d))}, nil
}
