package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
)

// faultHeader names, on every answer a fault changed, the fault that did.
const faultHeader = "X-Sandbox-Fault"

// malformedBody is what a "malformed" fault answers: a proxy's error page
// where the client expects JSON.
const malformedBody = "<html><body><h1>502 Bad Gateway</h1></body></html>\n"

// Bounds of what one key, and one client, may hold parked in injected
// delays and trickles and in settles at a time. Keys are free, so the
// client's bound is the one that keeps a tenant from filling the connection
// cap with requests that wait; past either, a fault's delay and trickle are
// skipped and the request is answered at once, as the fault otherwise says,
// and a settle answers at once with how the deliveries stand.
const (
	MaxParkedPerKey    = 8
	MaxParkedPerClient = 32
)

// injectFaults carries out the account's planned faults on API requests.
// A key over its limit is refused first, before a fault can hold its
// connection or answer for it; limitRate, which runs after, spends the
// budget only on requests that a handler answers, so that an injected
// failure does not use up the real limit.
func (s *Server) injectFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state := stateOf(r)
		a := state.account
		if a == nil || strings.HasPrefix(r.URL.Path, controlPrefix) || !a.Faults.RequestFaultsPlanned() {
			next.ServeHTTP(w, r)
			return
		}
		if d := a.Limiter.Peek(state.now); !d.Allowed {
			s.refuse(w, r, d, scopeKey, rateLimitMessage)
			return
		}
		fault, ok := a.Faults.Take(r.Method, r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if entry := state.journal; entry != nil {
			entry.noteFault(fault)
		}
		w.Header().Set(faultHeader, fault.ID)
		delay := time.Duration(fault.DelayMS) * time.Millisecond
		trickle := time.Duration(fault.TrickleMS) * time.Millisecond
		if delay > 0 || fault.Network == sandbox.NetworkTrickle {
			if unpark, parked := s.park(r, a); parked {
				defer unpark()
			} else {
				delay, trickle = 0, 0
			}
		}
		if fault.Phase == sandbox.PhaseAfter {
			s.faultAfter(next, w, r, fault, delay, trickle)
			return
		}
		if delay > 0 {
			// net/http notices a client that goes away only once the body
			// has been read.
			bufferBody(r)
			if !s.wait(r.Context(), delay) {
				// Gone before the API saw the request: it is not carried
				// out, and spends no budget.
				return
			}
			// Answered later than it arrived: its Date and its budget's
			// window are those of the end of the delay.
			s.serveAt(w, state, a.Clock.Now())
		}
		switch {
		case fault.Status != 0:
			// The budget as it stands: the injected failure spent none of it.
			s.setRateHeaders(w, a.Limiter.Peek(state.now), scopeKey)
			s.writeFault(w, r, fault)
		case fault.Network == sandbox.NetworkReset, fault.Network == sandbox.NetworkClose:
			readForJournal(r)
			s.dropConnection(w, r, fault.Network == sandbox.NetworkReset)
		case fault.Network == sandbox.NetworkMalformed:
			readForJournal(r)
			s.setRateHeaders(w, a.Limiter.Peek(state.now), scopeKey)
			s.writeMalformed(w)
		case fault.Network == sandbox.NetworkTruncate, fault.Network == sandbox.NetworkTrickle:
			s.sendAnswer(w, r, s.answerOf(next, w, r), fault, trickle)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// faultAfter carries out a request that a fault of PhaseAfter hit, and then
// does to its answer what the fault says: waits, and answers a status in
// its place, drops the connection, sends a body that is not JSON, or sends
// the answer, whole, truncated or trickled. A client that gives up during
// the wait has had nothing of an answer to a request that was carried out.
func (s *Server) faultAfter(next http.Handler, w http.ResponseWriter, r *http.Request, fault sandbox.Fault, delay, trickle time.Duration) {
	if delay > 0 {
		// As before a delay of PhaseBefore: a handler that stops reading
		// at the end of its JSON leaves net/http unaware of a client gone.
		bufferBody(r)
	}
	answer := s.answerOf(next, w, r)
	entry := journalOf(r)
	if delay > 0 && !s.wait(r.Context(), delay) {
		if entry != nil {
			entry.status = answer.status
		}
		return
	}
	if entry != nil && (fault.Status != 0 || fault.Network == sandbox.NetworkMalformed) {
		entry.apiStatus = answer.status
	}
	switch {
	case fault.Status != 0:
		// Answered in the API's place at the end of the delay: dated then,
		// with the budget as it stands then, as a delay before the write is.
		state, a := stateOf(r), accountOf(r)
		if delay > 0 {
			s.serveAt(w, state, a.Clock.Now())
		}
		s.setRateHeaders(w, a.Limiter.Peek(state.now), scopeKey)
		s.writeFault(w, r, fault)
	case fault.Network == sandbox.NetworkReset, fault.Network == sandbox.NetworkClose:
		if entry != nil {
			entry.status = answer.status
		}
		s.dropConnection(w, r, fault.Network == sandbox.NetworkReset)
	case fault.Network == sandbox.NetworkMalformed:
		s.writeMalformed(w)
	default:
		s.sendAnswer(w, r, answer, fault, trickle)
	}
}

// sendAnswer sends the API's answer as the fault says: truncated, trickled
// or whole.
func (s *Server) sendAnswer(w http.ResponseWriter, r *http.Request, a *answer, fault sandbox.Fault, trickle time.Duration) {
	switch fault.Network {
	case sandbox.NetworkTruncate:
		s.sendTruncated(w, r, a)
	case sandbox.NetworkTrickle:
		s.trickle(w, r, a, trickle)
	default:
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body.Bytes())
	}
}

// writeMalformed answers 200 with a JSON content type and a proxy's error
// page.
func (s *Server) writeMalformed(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(malformedBody)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, malformedBody)
}

// park counts a request that is about to wait in a fault against its key's
// and its client's bounds, and tells the listener, which closes parked
// connections before it refuses a new one. It reports false, counting
// nothing, when either bound is reached; else unpark ends the wait.
func (s *Server) park(r *http.Request, a *accounts.Account) (unpark func(), parked bool) {
	if a.Parked.Add(1) > MaxParkedPerKey {
		a.Parked.Add(-1)
		return nil, false
	}
	client, ok := s.clients.park(r, MaxParkedPerClient)
	if !ok {
		a.Parked.Add(-1)
		return nil, false
	}
	resume := func() {}
	if s.parkConn != nil {
		resume = s.parkConn(r.Context())
	}
	return func() {
		resume()
		s.clients.unpark(client)
		a.Parked.Add(-1)
	}, true
}

// writeFault answers an injected status with the fault's raw body; an error
// status without one in the envelope, with the code the sandbox gives that
// status, or INJECTED_FAILURE where it has none of its own; any other status
// without one with no body. The fault's headers go last, so that they
// replace the sandbox's own.
func (s *Server) writeFault(w http.ResponseWriter, r *http.Request, fault sandbox.Fault) {
	readForJournal(r)
	if fault.RetryAfterHeader != "" {
		w.Header().Set("Retry-After", fault.RetryAfterHeader)
	}
	var body []byte
	contentType := "application/json"
	switch {
	case fault.Body != nil:
		body = []byte(*fault.Body)
		if !json.Valid(body) {
			contentType = "text/plain; charset=utf-8"
		}
	case fault.Status < 400:
		// The API's own Content-Type, set before it was replaced, would
		// describe a body that is not there.
		contentType = ""
	default:
		code := sandbox.ErrInjectedFailure
		if own, ok := codeOf(fault.Status); ok {
			code = own
		}
		body, _ = json.Marshal(errorEnvelope{Error: errorBody{
			Code: code, Message: fmt.Sprintf("failure injected by POST /_sandbox/faults (%s)", w.Header().Get(faultHeader)), Status: fault.Status,
		}})
		body = append(body, '\n')
	}
	h := w.Header()
	if contentType == "" {
		h.Del("Content-Type")
	} else {
		h.Set("Content-Type", contentType)
	}
	for name, value := range fault.Headers {
		h.Set(name, value)
	}
	if sandbox.BodyAllowed(fault.Status) {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	} else {
		// HTTP gives these statuses no body, and so no length of one.
		h.Del("Content-Length")
	}
	w.WriteHeader(fault.Status)
	_, _ = w.Write(body)
}

// codeOf is the one error code answered with status, if exactly one is.
func codeOf(status int) (string, bool) {
	found := ""
	for code, s := range codeStatuses {
		if s == status {
			if found != "" {
				return "", false
			}
			found = code
		}
	}
	return found, found != ""
}

// dropConnection ends the connection without an answer: with a TCP RST when
// reset, else with an orderly close.
func (s *Server) dropConnection(w http.ResponseWriter, r *http.Request, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.logger.ErrorContext(r.Context(), "network fault: hijack", "path", loggedPath(r), "error", err)
		panic(http.ErrAbortHandler)
	}
	if entry := journalOf(r); entry != nil {
		entry.complete(r)
	}
	if tcp, ok := tcpConnOf(conn); ok && reset {
		_ = tcp.SetLinger(0)
		// Closed beneath TLS first: a TLS connection's Close sends
		// close_notify, an orderly end that the client would read before
		// the RST. The wrappers' Close then has only its bookkeeping to do.
		_ = tcp.Close()
	}
	_ = conn.Close()
}

// tcpConnOf finds the TCP connection beneath any wrappers that give theirs
// by a NetConn method, as crypto/tls's Conn and the binary's connection
// limiter do.
func tcpConnOf(conn net.Conn) (*net.TCPConn, bool) {
	for {
		switch c := conn.(type) {
		case *net.TCPConn:
			return c, true
		case interface{ NetConn() net.Conn }:
			conn = c.NetConn()
		default:
			return nil, false
		}
	}
}

// answer is a response kept whole before it is sent.
type answer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *answer) Header() http.Header { return a.header }

func (a *answer) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

func (a *answer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.body.Write(p)
}

// answerOf serves the request and keeps the whole answer, headers included,
// without sending any of it.
func (s *Server) answerOf(next http.Handler, w http.ResponseWriter, r *http.Request) *answer {
	a := &answer{header: w.Header()}
	next.ServeHTTP(a, r)
	if a.status == 0 {
		a.status = http.StatusOK
	}
	a.header.Set("Content-Length", strconv.Itoa(a.body.Len()))
	return a
}

// sendTruncated sends the answer's status line, headers, and half of the
// body its Content-Length promises, then closes the connection.
func (s *Server) sendTruncated(w http.ResponseWriter, r *http.Request, a *answer) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.logger.ErrorContext(r.Context(), "network fault: hijack", "path", loggedPath(r), "error", err)
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	half := a.body.Bytes()[:a.body.Len()/2]
	if entry := journalOf(r); entry != nil {
		entry.status, entry.received = a.status, accounts.ReceivedHeaders
		if len(half) > 0 {
			entry.received = accounts.ReceivedPartial
		}
	}
	a.header.Set("Connection", "close")
	if a.header.Get("Date") == "" {
		a.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", a.status, http.StatusText(a.status))
	_ = a.header.Write(buf)
	_, _ = buf.WriteString("\r\n")
	_, _ = buf.Write(half)
	_ = buf.Flush()
	if entry := journalOf(r); entry != nil {
		entry.complete(r)
	}
}

// trickleSteps is how many pieces a trickled body is sent in.
const trickleSteps = 10

// trickle sends the answer's body in pieces spread over d. Shutdown sends
// what is left at once.
func (s *Server) trickle(w http.ResponseWriter, r *http.Request, a *answer, d time.Duration) {
	w.WriteHeader(a.status)
	body := a.body.Bytes()
	flusher := http.NewResponseController(w)
	// The fault asked for the body to take d: the write deadline, set as
	// the answer started, covers that as well as a slow reader.
	if s.writeTimeout > 0 {
		_ = flusher.SetWriteDeadline(time.Now().Add(d + s.writeTimeout))
	}
	step := max(1, (len(body)+trickleSteps-1)/trickleSteps)
	for len(body) > 0 {
		n := min(step, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		body = body[n:]
		if len(body) == 0 {
			return
		}
		if err := flusher.Flush(); err != nil {
			return
		}
		if !s.wait(r.Context(), d/trickleSteps) {
			return
		}
	}
}

// bufferBody reads the start of the request body into memory, so that
// net/http watches the connection from then on for a body that small; the
// handlers read it from there as they would have from the connection. It
// reads no more than a body that waits for a large-body slot holds: a larger
// one stays in the connection, and a client that leaves is noticed when the
// delay ends.
func bufferBody(r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	read, _ := io.ReadAll(io.LimitReader(r.Body, largeBodyBytes))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(read), r.Body), r.Body}
}

// waitFor waits d, and reports false if the client went away first. It
// returns true at once when shutdown begins, so that a planned delay never
// holds the process past its grace period.
func (s *Server) waitFor(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.stopping:
		return true
	case <-ctx.Done():
		return false
	}
}

// EndDelays makes every injected delay and trickle, running or to come, end
// at once. The sandbox calls it when shutdown begins, so that requests in
// flight drain within the grace period.
func (s *Server) EndDelays() {
	s.stopOnce.Do(func() { close(s.stopping) })
}
