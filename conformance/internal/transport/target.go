package transport

import (
	"context"
	"net/http"
	"time"

	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/kit"
)

// Target is what every scenario of one run shares: where to send requests and
// with which credentials. It is read-only once the run starts.
type Target struct {
	BaseURL string
	Key     string
	Profile string
	Client  *http.Client
	Redact  func(string) string
	Budget  *Budget
	// Schema checks every exchange and delivery when --openapi is set.
	Schema kit.Schema
	// Model checks every exchange of a scenario against the contract.
	Model *model.Model
	// Coverage counts, per rule of docs/contract.md, the exchanges of the
	// run judged against it.
	Coverage *coverage.Recorder
	// Sleep waits out a 429 the run did not plan; nil waits on the real
	// clock. Tests give a clock of their own.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnThrottled hears of a request that stayed throttled, so that the
	// run can stop: it cannot judge what it cannot send.
	OnThrottled func(*ThrottledError)
	// OnGone hears of a request the deployment refused to connect, with
	// the request and the error: a deployment that stopped answering, so
	// that the run can stop rather than blame it for every scenario after.
	OnGone func(request string, err error)
}

func (t *Target) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	return sleep(ctx, d)
}
