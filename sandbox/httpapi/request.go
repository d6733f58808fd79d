package httpapi

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"runtime"
	"sync"

	"github.com/testcampaign/kit/sandbox"
)

// MaxBodyBytes is the largest request body the API reads.
const MaxBodyBytes = 1 << 20

// largeBodyBytes is the size from which a body is read and decoded in one of
// the largeBodies slots. The API's requests are far smaller, so only bodies
// built to cost memory and CPU wait.
const largeBodyBytes = 64 << 10

// largeBodies bounds how many large bodies are read and decoded at once, and
// each slot keeps its buffer. Each body costs a megabyte and milliseconds of
// CPU, and the scheduler shares the cores among all runnable goroutines
// alike: 64 of them at once took RSS up by hundreds of megabytes, made the
// collector run every few milliseconds, and kept every other tenant's
// request waiting for hundreds of milliseconds. A request waiting for a slot
// is parked, holds only what it has read so far, and leaves half the cores
// to everyone else. A slow sender may hold a slot until the server's read
// timeout, which delays only other large bodies.
var largeBodies = func() chan *bytes.Buffer {
	slots := make(chan *bytes.Buffer, max(1, runtime.GOMAXPROCS(0)/2))
	for range cap(slots) {
		slots <- new(bytes.Buffer)
	}
	return slots
}()

// smallBodies are the buffers bodies are first read into, up to
// largeBodyBytes, reused from one request to the next.
var smallBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// parseBody reads a JSON request body and decodes it with parse, one of the
// domain's request decoders. Its errors explain why the body cannot be
// used: UNSUPPORTED_MEDIA_TYPE, PAYLOAD_TOO_LARGE, REQUEST_TIMEOUT. The
// decoders copy what they keep, so a slot's buffer is reused.
func parseBody[T any](r *http.Request, parse func([]byte) (T, error)) (T, error) {
	var zero T
	if contentType := headerValue(r.Header, "Content-Type"); contentType != "application/json" {
		// Parsed only when it is not spelled as nearly every client
		// spells it.
		mediaType, _, err := mime.ParseMediaType(contentType)
		if err != nil || mediaType != "application/json" {
			return zero, sandbox.Errorf(sandbox.ErrUnsupportedMediaType,
				"request body must be sent with Content-Type: application/json (got %q)", sandbox.Echo(contentType))
		}
	}
	small := smallBodies.Get().(*bytes.Buffer)
	defer func() {
		small.Reset()
		smallBodies.Put(small)
	}()
	body := small
	var err error
	// A body whose Content-Length says it is large waits for its slot
	// before any of it is read, so that a crowd of them waiting holds
	// nothing but their connections; one of unknown length is read up to
	// the bound first.
	if r.ContentLength <= largeBodyBytes {
		_, err = io.CopyN(body, r.Body, largeBodyBytes)
	}
	if err == nil {
		head := body
		select {
		case body = <-largeBodies:
		case <-r.Context().Done():
			return zero, sandbox.Errorf(sandbox.ErrRequestTimeout, "the client left while its large body waited to be read")
		}
		defer func() {
			body.Reset()
			largeBodies <- body
		}()
		// ReadFrom wants MinRead bytes free even to read the end.
		body.Grow(int(min(r.ContentLength, MaxBodyBytes+1)) + bytes.MinRead)
		body.Write(head.Bytes())
		_, err = body.ReadFrom(r.Body)
	}
	if err := bodyError(r, body.Len(), err); err != nil {
		return zero, err
	}
	return parse(body.Bytes())
}

// bodyError is why a body that stopped with err after n bytes cannot be
// used, or nil if it arrived whole.
func bodyError(r *http.Request, n int, err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var tooLarge *http.MaxBytesError
	switch {
	// r.Body is limited by limitBody; writeError turns its error into
	// PAYLOAD_TOO_LARGE, and a stalled body into REQUEST_TIMEOUT.
	case errors.As(err, &tooLarge), errors.Is(err, os.ErrDeadlineExceeded):
		return err
	case r.ContentLength > 0:
		// The client half-closed or dropped the connection short of the
		// body it announced: its request is incomplete, and no fault of the
		// sandbox, so a 400 that a client does not retry as it would a 5xx.
		return sandbox.Errorf(sandbox.ErrInvalidJSON, "the request body ended after %d of the %d bytes its Content-Length announced", n, r.ContentLength)
	default:
		return sandbox.Errorf(sandbox.ErrInvalidJSON, "the request body ended before it was complete")
	}
}

// headerValue is h.Get(canonical) for a name already in canonical form, as
// net/http stores a request's header names: without canonicalising the
// name again, which Get does on every call.
func headerValue(h http.Header, canonical string) string {
	if values := h[canonical]; len(values) > 0 {
		return values[0]
	}
	return ""
}

// pageRequest reads the limit and cursor query parameters.
func pageRequest(r *http.Request) (sandbox.PageRequest, error) {
	q := queryOf(r)
	return sandbox.ParsePageRequest(q.Get("limit"), q.Get("cursor"))
}
