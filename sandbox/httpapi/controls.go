package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// resetAccount empties and reseeds the caller's account, and forgets its
// rate-limit counts and planned faults, so a test can start from scratch.
func (s *Server) resetAccount(r *http.Request) (any, error) {
	account := accountOf(r)
	if err := s.store.ResetAccount(account.ID); err != nil {
		return nil, err
	}
	s.limiter.Forget(account.ID)
	s.faults.clear(account.ID)
	s.requestLog.clear(account.ID)
	return map[string]bool{"reset": true}, nil
}

// fileBug simulates a tester filing a bug, which the API itself cannot do.
func (s *Server) fileBug(r *http.Request) (any, error) {
	in, err := parseBody(r, sandbox.ParseBugInput)
	if err != nil {
		return nil, err
	}
	return s.store.FileBug(accountOf(r).ID, in)
}

func (s *Server) listEvents(r *http.Request) (any, error) {
	page, err := pageRequest(r)
	if err != nil {
		return nil, err
	}
	return s.store.Events(accountOf(r).ID, page)
}

func (s *Server) listDeliveries(r *http.Request) (any, error) {
	page, err := pageRequest(r)
	if err != nil {
		return nil, err
	}
	return s.store.Deliveries(accountOf(r).ID, page)
}

func (s *Server) listRequests(r *http.Request) (any, error) {
	return sandbox.NewPage(s.requestLog.recent(accountOf(r).ID), false, 0), nil
}

func (s *Server) planFaults(r *http.Request) (any, error) {
	plan, err := parseBody(r, sandbox.ParseFaultPlan)
	if err != nil {
		return nil, err
	}
	s.faults.set(accountOf(r).ID, plan)
	return plan, nil
}

// moveClock advances the frozen clock. The clock is the whole sandbox's, not
// the account's: records of every account are stamped from it.
func (s *Server) moveClock(r *http.Request) (any, error) {
	if s.frozenClock == nil {
		return nil, sandbox.Errorf(sandbox.ErrConflict, "the clock is not frozen; start the sandbox with --frozen-clock to move it")
	}
	d, err := parseBody(r, sandbox.ParseClockMove)
	if err != nil {
		return nil, err
	}
	return map[string]time.Time{"now": s.frozenClock.Advance(d).UTC()}, nil
}

// injectFaults carries out the account's fault plan on API requests.
func (s *Server) injectFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state := stateOf(r)
		if state.account == nil || strings.HasPrefix(r.URL.Path, controlPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		plan, ok := s.faults.take(state.account.ID)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if plan.DelayMS > 0 {
			select {
			case <-time.After(time.Duration(plan.DelayMS) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if plan.Status == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if plan.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeError(w, sandbox.Errorf(sandbox.FaultCodes[plan.Status], "failure injected by POST /_sandbox/faults"))
	})
}

// faultPlans holds each account's planned faults.
type faultPlans struct {
	mu    sync.Mutex
	plans map[string]sandbox.FaultPlan
}

func newFaultPlans() *faultPlans {
	return &faultPlans{plans: map[string]sandbox.FaultPlan{}}
}

func (f *faultPlans) set(accountID string, plan sandbox.FaultPlan) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans[accountID] = plan
}

func (f *faultPlans) clear(accountID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.plans, accountID)
}

// take uses up one planned fault of the account, if it has one left.
func (f *faultPlans) take(accountID string) (sandbox.FaultPlan, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	plan, ok := f.plans[accountID]
	if !ok {
		return plan, false
	}
	if plan.Count--; plan.Count == 0 {
		delete(f.plans, accountID)
	} else {
		f.plans[accountID] = plan
	}
	return plan, true
}

// requestLogSize is how many recent requests an account's log keeps.
const requestLogSize = 100

type loggedRequest struct {
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	Query      string    `json:"query"`
	Status     int       `json:"status"`
	At         time.Time `json:"at"`
	DurationMS int64     `json:"durationMs"`
}

// requestLogs keeps each account's most recent API requests.
type requestLogs struct {
	mu   sync.Mutex
	logs map[string][]loggedRequest
}

func newRequestLogs() *requestLogs {
	return &requestLogs{logs: map[string][]loggedRequest{}}
}

func (l *requestLogs) add(accountID string, req loggedRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	log := append(l.logs[accountID], req)
	if len(log) > requestLogSize {
		log = log[len(log)-requestLogSize:]
	}
	l.logs[accountID] = log
}

func (l *requestLogs) clear(accountID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.logs, accountID)
}

// recent returns the account's logged requests, newest first.
func (l *requestLogs) recent(accountID string) []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := slices.Clone(l.logs[accountID])
	slices.Reverse(recent)
	return recent
}
