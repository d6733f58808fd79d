package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
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
	a := accountOf(r)
	if a.Outbox == nil {
		return sandbox.NewPage[sandbox.Delivery](nil, false, 0), nil
	}
	s.awaitSent(r, a)
	return a.Outbox.Deliveries(page), nil
}

// DeliveryReadWait bounds how long a read of the delivery records waits for
// the attempts already sent to a receiver to be recorded: an answered
// attempt is recorded within milliseconds, and one whose receiver hangs
// delays the read no longer than this.
const DeliveryReadWait = 2 * time.Second

// awaitSent waits, at most DeliveryReadWait, until the attempts of a's
// outbox already sent to a receiver are recorded, so that a receiver that
// has answered an attempt finds it in whatever reads the records next: the
// list of deliveries and the verdict. With none sent it returns at once;
// the wait is a delayed request's, and past the parked bounds there is
// none.
func (s *Server) awaitSent(r *http.Request, a *accounts.Account) {
	if !a.Outbox.Sending() {
		return
	}
	unpark, parked := s.park(r, a)
	if !parked {
		return
	}
	defer unpark()
	ctx, cancel := context.WithTimeout(r.Context(), DeliveryReadWait)
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	a.Outbox.AwaitSent(ctx)
}

// settleDeliveries answers once no delivery of the account is in flight,
// queued or due, or once the timeout asked for has passed, or shutdown has
// begun; the answer says which. A settle waits as a delayed request does:
// counted against its key's and its client's bounds, with its connection
// the limiter's to close at the cap; past either bound it answers at once
// with how the deliveries stand.
func (s *Server) settleDeliveries(r *http.Request) (any, error) {
	timeout, err := parseBody(r, sandbox.ParseSettle)
	if err != nil {
		return nil, err
	}
	a := accountOf(r)
	outbox := a.Outbox
	if outbox == nil {
		return sandbox.Settlement{Settled: true}, nil
	}
	if unpark, parked := s.park(r, a); parked {
		defer unpark()
	} else {
		timeout = 0
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	return outbox.Settle(ctx), nil
}

// listRequests shows the account's request journal, newest first, only the
// requests with the method and path asked for, if any: a page of them, or
// with count=true how many there are.
func (s *Server) listRequests(r *http.Request) (any, error) {
	q := queryOf(r)
	method, path := q.Get("method"), q.Get("path")
	if err := sandbox.ParseJournalFilter(method, path); err != nil {
		return nil, err
	}
	count, err := parseCount(q.Get("count"))
	if err != nil {
		return nil, err
	}
	page, err := sandbox.ParsePageRequest(cmp.Or(q.Get("limit"), strconv.Itoa(accounts.RequestLogSize)), q.Get("cursor"))
	if err != nil {
		return nil, err
	}
	requests := accountOf(r).Requests.Recent(method, path)
	if count {
		return map[string]int{"count": len(requests)}, nil
	}
	if page.Before != 0 {
		start, _ := slices.BinarySearchFunc(requests, page.Before, func(req accounts.LoggedRequest, before uint64) int {
			// Newest first: a smaller Seq comes later.
			return cmp.Compare(before, req.Seq+1)
		})
		requests = requests[start:]
	}
	hasMore := len(requests) > page.Limit
	requests = requests[:min(len(requests), page.Limit)]
	var last uint64
	if len(requests) > 0 {
		last = requests[len(requests)-1].Seq
	}
	return sandbox.NewPage(requests, hasMore, last), nil
}

// parseCount reads the journal's count parameter: true, false or absent.
func parseCount(v string) (bool, error) {
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, sandbox.Errorf(sandbox.ErrInvalidParameter, "count must be true or false (got %q)", sandbox.Echo(v))
}

// planFault adds a fault after those already planned.
func (s *Server) planFault(r *http.Request) (any, error) {
	spec, err := parseBody(r, sandbox.ParseFaultSpec)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Faults.Add(spec)
}

func (s *Server) listFaults(r *http.Request) (any, error) {
	faults := accountOf(r).Faults.List()
	for i := range faults {
		faults[i] = faults[i].Shown()
	}
	return sandbox.NewPage(faults, false, 0), nil
}

func (s *Server) clearFaults(r *http.Request) (any, error) {
	return map[string]int{"cleared": accountOf(r).Faults.Clear()}, nil
}

// readClock answers the account's time, frozen or not.
func (s *Server) readClock(r *http.Request) (any, error) {
	a := accountOf(r)
	return clockReading{Now: sandbox.At(a.Clock.Now()), Frozen: a.Frozen != nil}, nil
}

type clockReading struct {
	Now    sandbox.Time `json:"now"`
	Frozen bool         `json:"frozen"`
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
