package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// Request is one request the kit sends to the deployment: the steps', the
// explorer's, and the run's own (its preflight, the budget it reads, the
// seed and clock it probes).
type Request struct {
	Method string
	// Path is the path and query under the deployment's base URL.
	Path string
	// Key is sent as "Authorization: Bearer <Key>"; Auth, if set instead,
	// is the whole header as a step writes it. Neither sends none.
	Key  string
	Auth string
	// Body is sent as it is; nil sends none. ContentType is its type.
	Body        []byte
	ContentType string
	// Header holds the request's other headers; they are set last, so
	// that a step can send any header it names.
	Header http.Header
	// Sink is the scenario that judges the exchange by the rules of every
	// response and the model; nil leaves the exchange unjudged, as the
	// run's own requests are.
	Sink *rules.Sink
	// SelfPaced hands a 429 back as it came, for a sender that waits out
	// its throttling itself (the explorer, under its deadline).
	SelfPaced bool
}

// Send is the one way the kit sends a request to the deployment. It
// spends the run's budget, waits out a 429 the run did not plan, reads the
// answer's body once, at most MaxBody of it, and, for a scenario's request
// (r.Sink set), judges the exchange once by the rules of every response,
// the model and the OpenAPI document, whose breaks go to the sink. The
// exchange keeps the request's headers and body. When the deployment did
// not answer, err says why and the exchange holds what was sent, for a
// step that expects the connection to drop; when it answered but its body
// broke off, the exchange also holds the status and headers. The exchange
// is nil only for a request that could not be built.
func (t *Target) Send(ctx context.Context, r Request) (*wire.Exchange, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	url := strings.TrimRight(t.BaseURL, "/") + r.Path
	req, err := http.NewRequestWithContext(ctx, r.Method, url, body)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Key != "":
		req.Header.Set("Authorization", "Bearer "+r.Key)
	case r.Auth != "":
		req.Header.Set("Authorization", r.Auth)
	}
	if r.Body != nil && r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	ex := &wire.Exchange{Method: r.Method, URL: url, ReqHeader: req.Header, ReqBody: r.Body}
	token := bearerToken(req.Header.Get("Authorization"))
	sink := r.Sink
	if sink != nil {
		sink.SentKey(token)
	}
	if b := t.Budget; sink != nil && !sink.Unbudgeted && b != nil && token == t.Key && strings.HasPrefix(req.URL.Path, "/v1") && !b.take() {
		return ex, fmt.Errorf("%w: %d of a limit of %d", ErrBudgetSpent, b.Share, b.Of)
	}
	var fl *model.Flight
	if t.Model != nil && sink != nil && token != "" {
		fl = t.Model.Begin(token)
	}
	ex.Sent = time.Now()
	resp, err := t.send(req, token, r)
	if err == nil {
		ex.Body, ex.BodyCut, err = wire.ReadBody(resp.Body)
		resp.Body.Close()
		ex.Status, ex.Header = resp.StatusCode, resp.Header
	}
	ex.Elapsed = time.Since(ex.Sent)
	if err != nil {
		if fl != nil {
			t.Model.Abandon(fl, req.Method, req.URL.Path, req.URL.RawQuery)
		}
		return ex, err
	}
	if sink != nil {
		t.judge(sink, fl, token, req, resp, ex)
	}
	return ex, nil
}

// FetchDocument GETs a document at url, which may be outside the
// deployment, without the key: it is public, and a key must not travel to
// an address the operator may not control. It waits out throttling as
// every request of the run does, and judges nothing.
func (t *Target) FetchDocument(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := t.send(req, "", Request{})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, errors.New(res.Status)
	}
	return io.ReadAll(io.LimitReader(res.Body, wire.MaxBody))
}

// send sends req, and again while the answer is a 429 the run did not plan,
// each time after the wait its Retry-After asks for, up to maxThrottleWait
// in all.
func (t *Target) send(req *http.Request, token string, r Request) (*http.Response, error) {
	var waited time.Duration
	for try := req; ; {
		resp, err := t.Client.Do(try)
		var dial *net.OpError
		if err != nil && t.OnGone != nil && errors.As(err, &dial) && dial.Op == "dial" && req.Context().Err() == nil &&
			(errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)) {
			// The port refused the connection, or reset it before it
			// was accepted: nothing listens any more. A fault a scenario
			// plans drops a connection it accepted; it never closes the
			// port. A dial that timed out or ran out of local ports says
			// nothing of the deployment.
			t.OnGone(req.Method+" "+req.URL.Path, dial.Err)
		}
		if err != nil || !t.unplanned(resp, token, r) {
			return resp, err
		}
		wait := retryAfter(resp.Header)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, wire.MaxBody))
		resp.Body.Close()
		if waited+wait > maxThrottleWait || (req.Body != nil && req.GetBody == nil) {
			limit, _ := strconv.Atoi(resp.Header.Get("X-RateLimit-Limit"))
			e := &ThrottledError{Scope: ScopeOf(resp.Header), Limit: limit, Request: req.Method + " " + req.URL.Path, RetryAfter: wait, Waited: waited}
			if t.OnThrottled != nil {
				t.OnThrottled(e)
			}
			return nil, e
		}
		if err := t.sleep(req.Context(), wait); err != nil {
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
