// Package transport is the one path every request of a run takes: an
// http.RoundTripper that spends the run's share of the key's rate limit,
// applies the rules of every response, and feeds each exchange to the
// model, whose disagreements fail the scenario that made the exchange.
package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// CheckingTransport is the one path every request of a run takes. It spends
// the rate-limit budget and checks the rules that hold for every response,
// and, with --openapi, the exchange against the document.
type CheckingTransport struct {
	Next   http.RoundTripper
	Target *Target
}

func (t *CheckingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	sink, _ := req.Context().Value(ruleSinkKey{}).(*rules.RuleSink)
	token := bearerToken(req.Header.Get("Authorization"))
	if sink != nil {
		sink.SentKey(token)
	}
	if b := t.Target.Budget; sink != nil && !sink.Unbudgeted && b != nil && token == t.Target.Key && strings.HasPrefix(req.URL.Path, "/v1") && !b.take() {
		return nil, fmt.Errorf("%w: %d of a limit of %d", ErrBudgetSpent, b.Share, b.Of)
	}
	var reqBody []byte
	var fl *model.Flight
	if m := t.Target.Model; m != nil && sink != nil && token != "" {
		fl = m.Begin(token)
	}
	abandon := func() {
		if fl != nil {
			t.Target.Model.Abandon(fl, req.Method, req.URL.Path)
		}
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	resp, err := t.send(req, token, sink)
	if err != nil {
		abandon()
		return nil, err
	}
	if sink == nil {
		return resp, nil
	}
	body, cut, err := wire.ReadBody(resp.Body)
	resp.Body.Close()
	if err != nil {
		abandon()
		return nil, err
	}
	resp.Body = wire.CutBody{Reader: bytes.NewReader(body), Cut: cut}
	e := &wire.Exchange{Method: req.Method, URL: req.URL.String(), ReqHeader: req.Header, ReqBody: reqBody,
		Status: resp.StatusCode, Header: resp.Header, Body: body, BodyCut: cut}
	rules.CheckResponse(t.Target.Profile, sink, req, e)
	if fl != nil {
		t.Target.feedModel(fl, sink, token, req, reqBody, resp, body)
	}
	if t.Target.Schema != nil && !rules.FaultWroteBody(t.Target.Profile, e) {
		if v, ok := rules.FromSchema(t.Target.Schema.Check(req, reqBody, resp, body), req.Method+" "+req.URL.Path); ok {
			v.Exchange = e
			sink.Add(v)
		}
	}
	return resp, nil
}

// send sends req, and again while the answer is a 429 the run did not plan,
// each time after the wait its Retry-After asks for, up to maxThrottleWait
// in all. Each try has the request timeout of its own, so that waiting is
// not mistaken for a deployment too slow to answer.
func (t *CheckingTransport) send(req *http.Request, token string, sink *rules.RuleSink) (*http.Response, error) {
	var waited time.Duration
	for try := req; ; {
		resp, err := t.try(try)
		if err != nil || !t.Target.unplanned(try, resp, token, sink) {
			return resp, err
		}
		wait := retryAfter(resp.Header)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, wire.MaxBody))
		resp.Body.Close()
		if waited+wait > maxThrottleWait || (req.Body != nil && req.GetBody == nil) {
			limit, _ := strconv.Atoi(resp.Header.Get("X-RateLimit-Limit"))
			e := &ThrottledError{Scope: ScopeOf(resp.Header), Limit: limit, Request: req.Method + " " + req.URL.Path, RetryAfter: wait, Waited: waited}
			if t.Target.OnThrottled != nil {
				t.Target.OnThrottled(e)
			}
			return nil, e
		}
		if err := t.Target.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		waited += wait
		try = req.Clone(req.Context())
		if req.GetBody != nil {
			if try.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

// try sends req once, under the request timeout, which also covers reading
// the answer's body.
func (t *CheckingTransport) try(req *http.Request) (*http.Response, error) {
	if t.Target.Timeout <= 0 {
		return t.Next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.Target.Timeout)
	resp, err := t.Next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			err = fmt.Errorf("%w (no answer within %s)", err, t.Target.Timeout)
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

type ruleSinkKey struct{}

// bearerToken is the credential of an Authorization header: the part after
// the scheme word, whichever scheme it is.
func bearerToken(h string) string {
	f := strings.Fields(h)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
