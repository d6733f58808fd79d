package httpapi

import (
	"net/http"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/clientverdict"
)

// judgeClient answers the verdict on the calling key's client: each client
// rule of docs/contract.md held, broken or not exercised, judged on the
// account's trace and delivery attempts in the window asked for. It reads
// what the account kept and changes nothing; like a read of the delivery
// records, it first waits for the attempts already sent to be recorded, so
// that a receiver that has answered finds its attempt judged.
func (s *Server) judgeClient(r *http.Request) (any, error) {
	q := queryOf(r)
	window, err := clientverdict.ParseWindow(q.Get("since"), q.Get("after"))
	if err != nil {
		return nil, err
	}
	a := accountOf(r)
	var deliveries []sandbox.Delivery
	if a.Outbox != nil {
		s.awaitSent(r, a)
		deliveries = a.Outbox.Deliveries(sandbox.PageRequest{Limit: clientverdict.MaxDeliveries}).Items
	}
	return clientverdict.Judge(a.Trace, deliveries, window), nil
}
