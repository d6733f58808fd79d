package transport

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"

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
	Sink *rules.RuleSink
	// SelfPaced hands a 429 back as it came, for a sender that waits out
	// its throttling itself (the explorer, under its deadline).
	SelfPaced bool
}

// Send is the one way the kit sends a request: through the checking
// transport, which spends the budget, waits out a 429 the run did not
// plan and judges the answer, and its body read once, at most MaxBody of
// it. The exchange keeps the request's headers and body. When the
// deployment did not answer, err says why and the exchange holds what was
// sent, for a step that expects the connection to drop; when it answered
// but its body broke off, the exchange also holds the status and headers.
// The exchange is nil only for a request that could not be built.
func (t *Target) Send(ctx context.Context, r Request) (*wire.Exchange, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	if r.Sink != nil {
		ctx = context.WithValue(ctx, ruleSinkKey{}, r.Sink)
	}
	if r.SelfPaced {
		ctx = selfPaced(ctx)
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
	sent := time.Now()
	resp, err := t.Client.Do(req)
	if err == nil {
		ex.Body, ex.BodyCut, err = wire.ReadBody(resp.Body)
		ex.BodyCut = ex.BodyCut || wire.WasCut(resp.Body)
		resp.Body.Close()
		ex.Status, ex.Header = resp.StatusCode, resp.Header
	}
	ex.Elapsed = time.Since(sent)
	return ex, err
}
