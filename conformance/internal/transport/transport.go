// Package transport is the one road every request of a run takes:
// Target.Send builds the request, spends the run's share of the key's rate
// limit, waits out a 429 the run did not plan, reads the answer once and
// judges the exchange once, by the rules of every response and by the
// model, for the scenario that sent it.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// ErrBudgetSpent refuses a request with the operator's key once the run has
// spent its share of the key's rate-limit window.
var ErrBudgetSpent = errors.New("rate-limit budget spent")

// Budget is the share of the operator key's rate-limit window the run may
// spend, so that conform never starves the key's other clients or its own
// later scenarios.
type Budget struct {
	mu    sync.Mutex
	Left  int
	Of    int // the limit in force when the run started
	Share int // how much of it the run may spend
}

func (b *Budget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Left <= 0 {
		return false
	}
	b.Left--
	return true
}

// NewClient is the HTTP client of a run: at most maxIdle idle connections
// to the deployment, each try of a request bounded by timeout, its answer's
// body included, and redirects handed back as they came, since one would
// hide the status the deployment really answered.
func NewClient(maxIdle int, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = maxIdle
	return &http.Client{
		Transport:     &tryTransport{next: tr, timeout: timeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// tryTransport gives each try of a request the request timeout of its own,
// so that waiting out a 429 is not mistaken for a deployment too slow to
// answer.
type tryTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *tryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			err = fmt.Errorf("%w (no answer within %s)", err, t.timeout)
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases a try's timeout once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// judge holds one exchange of a scenario to the rules of every response,
// the model and, with --openapi, the document; what breaks goes to the
// scenario's sink, on the step that sent it.
func (t *Target) judge(sink *rules.Sink, fl *model.Flight, token string, req *http.Request, resp *http.Response, e *wire.Exchange) {
	rules.CheckResponse(t.Profile, sink, req, e)
	if fl != nil {
		t.feedModel(fl, sink, token, req, e)
	}
	if t.Schema != nil && !rules.FaultWroteBody(t.Profile, e) {
		if v, ok := rules.FromSchema(t.Schema.Check(req, e.ReqBody, resp, e.Body), req.Method+" "+req.URL.Path); ok {
			v.Exchange = e
			sink.Add(v)
		}
	}
}

// bearerToken is the credential of an Authorization header: the part after
// the scheme word, whichever scheme it is.
func bearerToken(h string) string {
	f := strings.Fields(h)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
