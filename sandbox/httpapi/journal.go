package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
	"github.com/testcampaign/kit/sandbox/clientverdict"
)

// journalEntry is what the journal learns about a request while it is
// served: the fault that hit it, and what was sent back.
type journalEntry struct {
	log *accounts.RequestLog
	seq uint64
	// status is the status sent, 0 while none was.
	status int
	// apiStatus is the status of the API's own answer when a fault of
	// phase after sent another in its place; 0 otherwise.
	apiStatus int
	// hijacked is true once a fault took the connection over; the status,
	// if any, is then the one the fault sent, and received what it sent.
	hijacked bool
	received string
	// carriedOut is true once the API has taken the request on, its
	// budget spent.
	carriedOut bool
	// headerSent and bodySent are what a flush has put on the connection
	// of an answer still being written.
	headerSent bool
	bodySent   int64
	written    int64
	body       *bodyTap
	started    time.Time
	// done is true once the entry is completed.
	done bool
	// What the account's trace is told of the exchange once it is over,
	// for the verdict on the client: see observe.
	trace  *clientverdict.Trace
	clock  sandbox.Clock
	at     time.Time
	fault  *sandbox.Fault
	header http.Header
	// connOpened and connRequest are when the request's connection opened
	// and the request's number on it, as clientverdict.NoteRequest gives
	// them.
	connOpened  time.Time
	connRequest uint64
}

// journalOf returns the entry of a request the journal keeps, or nil.
func journalOf(r *http.Request) *journalEntry {
	return stateOf(r).journal
}

// journal keeps each API request of an account, in the order they arrive,
// as its client sent it and with what it was answered, for
// GET /_sandbox/requests.
func (s *Server) journal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := accountOf(r)
		if a == nil {
			next.ServeHTTP(w, r)
			return
		}
		// Controls count too: a connection that carried one was in use.
		opened, onConn := clientverdict.NoteRequest(r.Context())
		if strings.HasPrefix(r.URL.Path, controlPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		state := stateOf(r)
		state.journalBody = bodyTap{ReadCloser: r.Body}
		entry := &state.journalEntry
		*entry = journalEntry{
			log: &a.Requests, body: &state.journalBody, started: state.started, received: accounts.ReceivedNothing,
			trace: a.Trace, clock: a.Clock, at: state.now, header: w.Header(), connOpened: opened, connRequest: onConn,
		}
		entry.seq = a.Requests.Add(accounts.LoggedRequest{
			Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Headers: r.Header,
			At: sandbox.At(state.now), Pending: true, Received: accounts.ReceivedNothing,
		})
		r.Body = entry.body
		// In the request's state, not a context value of its own: that
		// would copy the request once more.
		state.journal = entry
		if a.Faults.DeliveryFaultsPlanned() {
			// Only then may a webhook fault hit the request's events.
			r = r.WithContext(accounts.NoteDeliveryFaults(r.Context(), entry.noteDeliveryFault))
		}
		state.journalRecorder = journalRecorder{ResponseWriter: w, entry: entry}
		next.ServeHTTP(&state.journalRecorder, r)
		entry.complete(r)
	})
}

// noteFault shows on the entry, while the request is still served, the
// fault that hit it.
func (entry *journalEntry) noteFault(fault sandbox.Fault) {
	entry.fault = &fault
	shown := fault.Shown()
	entry.log.Complete(entry.seq, func(logged *accounts.LoggedRequest) { logged.Fault = &shown })
}

// noteDeliveryFault shows on the entry a webhook fault that hit a delivery
// of an event the request made.
func (entry *journalEntry) noteDeliveryFault(fault sandbox.Fault) {
	entry.log.Complete(entry.seq, func(logged *accounts.LoggedRequest) {
		logged.DeliveryFaults = append(logged.DeliveryFaults, fault)
	})
}

// complete fills the entry in with the answer, once: when the handler
// returns, or before a network fault ends the connection, so that a client
// that sees its connection end finds the request complete in the journal.
func (entry *journalEntry) complete(r *http.Request) {
	if entry.done {
		return
	}
	entry.done = true
	tap := entry.body
	abandoned := r.Context().Err() != nil && !entry.hijacked
	status, received, carriedOut, apiStatus := entry.status, entry.received, entry.carriedOut, entry.apiStatus
	if !entry.hijacked {
		received = entry.sent(abandoned)
	}
	entry.log.Complete(entry.seq, func(logged *accounts.LoggedRequest) {
		logged.Body, logged.BodyBytes, logged.BodyTruncated = string(tap.kept), tap.read, tap.read > int64(len(tap.kept))
		logged.DurationMS = time.Since(entry.started).Milliseconds()
		logged.Abandoned, logged.Pending = abandoned, false
		logged.CarriedOut, logged.Received = carriedOut, received
		if status != 0 {
			logged.Status = statusPointer(status)
		}
		if apiStatus != 0 {
			logged.APIStatus = &apiStatus
		}
	})
	entry.observe(r, status, received, carriedOut, abandoned)
}

// observe tells the account's trace of the exchange, at the moment the
// journal completes it, so that a client that sees its answer, or its
// connection end, finds the exchange judged by the next verdict.
func (entry *journalEntry) observe(r *http.Request, status int, received string, carriedOut, abandoned bool) {
	if entry.trace == nil {
		return
	}
	// One HTTP/2 connection carries requests side by side: it tells
	// nothing of their order.
	conn := r.RemoteAddr
	if r.ProtoMajor > 1 {
		conn = ""
	}
	entry.trace.Observe(clientverdict.Observation{
		Request: entry.seq, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Authorization: headerValue(r.Header, "Authorization"), ContentType: headerValue(r.Header, "Content-Type"),
		Body: entry.body.kept, BodyBytes: entry.body.read, ContentLength: r.ContentLength,
		At: entry.at, Answered: entry.clock.Now(), Arrived: entry.started, Ended: time.Now(),
		Status: status, Received: received, CarriedOut: carriedOut, Abandoned: abandoned,
		Conn: conn, ConnOpened: entry.connOpened, ConnRequest: entry.connRequest,
		Fault: entry.fault, Header: entry.header,
	})
}

// statusValues are the statuses an entry points at, shared and never
// written through, so that completing an entry allocates no int of its own.
var statusValues = func() (v [1000]int) {
	for i := range v {
		v[i] = i
	}
	return v
}()

// statusPointer returns a pointer to status, shared for the statuses
// net/http sends, 100 to 999.
func statusPointer(status int) *int {
	if status >= 0 && status < len(statusValues) {
		return &statusValues[status]
	}
	own := new(int)
	*own = status
	return own
}

// sent says what the client was sent of an answer that no fault hijacked.
// A client gone before the handler returned has had only what was flushed
// to it: the rest is still in the connection's buffer.
func (entry *journalEntry) sent(abandoned bool) string {
	switch {
	case entry.status != 0 && !abandoned:
		return accounts.ReceivedAll
	case entry.bodySent > 0:
		return accounts.ReceivedPartial
	case entry.headerSent:
		return accounts.ReceivedHeaders
	}
	return accounts.ReceivedNothing
}

// journalRecorder notes the status a handler sends.
type journalRecorder struct {
	http.ResponseWriter
	entry *journalEntry
}

func (rec *journalRecorder) WriteHeader(status int) {
	if rec.entry.status == 0 {
		rec.entry.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *journalRecorder) Write(p []byte) (int, error) {
	if rec.entry.status == 0 {
		rec.entry.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(p)
	rec.entry.written += int64(n)
	return n, err
}

// FlushError notes what a flush put on the connection, for what the
// journal says the client received of an answer it left during.
func (rec *journalRecorder) FlushError() error {
	err := http.NewResponseController(rec.ResponseWriter).Flush()
	if err == nil && rec.entry.status != 0 {
		rec.entry.headerSent, rec.entry.bodySent = true, rec.entry.written
	}
	return err
}

// Hijack hands the connection to a network fault, which then says what, if
// anything, it sent.
func (rec *journalRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	rec.entry.hijacked = true
	return http.NewResponseController(rec.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection's flusher.
func (rec *journalRecorder) Unwrap() http.ResponseWriter {
	return rec.ResponseWriter
}

// bodyTap keeps the start of a request body as the handler reads it, and
// counts the rest.
type bodyTap struct {
	io.ReadCloser
	kept []byte
	read int64
}

func (b *bodyTap) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := accounts.MaxLoggedBody - len(b.kept); room > 0 {
		b.kept = append(b.kept, p[:min(n, room)]...)
	}
	b.read += int64(n)
	return n, err
}

// readForJournal reads as much of the body as the journal keeps, for faults
// that answer before any handler would read it.
func readForJournal(r *http.Request) {
	if entry := journalOf(r); entry != nil {
		_, _ = io.CopyN(io.Discard, r.Body, accounts.MaxLoggedBody)
	}
}
