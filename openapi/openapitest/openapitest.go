// Package openapitest checks in tests that an HTTP handler's traffic matches
// the OpenAPI document, so the document and the sandbox cannot drift apart
// unnoticed.
package openapitest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/testcampaign/kit/openapi"
)

var (
	defaultOnce      sync.Once
	defaultValidator *openapi.Validator
	defaultErr       error
)

// Default returns the validator of the embedded document, built once per
// test binary because building it takes tens of milliseconds.
func Default(tb testing.TB) *openapi.Validator {
	tb.Helper()
	defaultOnce.Do(func() { defaultValidator, defaultErr = openapi.Default(openapi.Strict()) })
	if defaultErr != nil {
		tb.Fatalf("load the OpenAPI document: %v", defaultErr)
	}
	return defaultValidator
}

// Handler returns h, wrapped so that every exchange it serves is checked
// against the embedded document, strictly (openapi.Strict), and every
// violation fails tb. Options add to Strict, as openapi.StrictRequestHeaders
// does.
//
// Benchmarks and fuzz targets get h unwrapped: checking would be measured
// with the handler, and a fuzz target may not fail through its *testing.F.
func Handler(tb testing.TB, h http.Handler, opts ...openapi.Option) http.Handler {
	tb.Helper()
	switch tb.(type) {
	case *testing.B, *testing.F:
		return h
	}
	v := Default(tb)
	if len(opts) > 0 {
		var err error
		if v, err = openapi.Default(append([]openapi.Option{openapi.Strict()}, opts...)...); err != nil {
			tb.Fatalf("load the OpenAPI document: %v", err)
		}
	}
	return Checking(v, h, func(r *http.Request, status int, v openapi.Violation) {
		tb.Errorf("OpenAPI drift: %s %s answered %d: %s", r.Method, r.URL.RequestURI(), status, v)
	})
}

// Checking returns h, wrapped so that every exchange it serves is checked
// with v, and report is called once per violation.
func Checking(v *openapi.Validator, h http.Handler, report func(r *http.Request, status int, v openapi.Violation)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body is copied as the handler reads it, not read beforehand,
		// so that a slow or broken body reaches the handler as it came.
		var reqBody bytes.Buffer
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &reqBody), r.Body}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		// A fault planned with POST /_sandbox/faults may break the
		// document on purpose: headers and a body of its own, a body that
		// is not JSON, or a connection taken over to be cut.
		if rec.hijacked || w.Header().Get(FaultHeader) != "" {
			return
		}
		res := &http.Response{
			StatusCode: rec.status, Header: w.Header().Clone(), Request: r,
			ProtoMajor: r.ProtoMajor, ProtoMinor: r.ProtoMinor, Proto: r.Proto,
		}
		for _, violation := range v.Check(r, reqBody.Bytes(), res, rec.body.Bytes()) {
			report(r, rec.status, violation)
		}
	})
}

// FaultHeader marks the sandbox's answers that a planned fault changed.
const FaultHeader = openapi.FaultHeader

// recorder passes a response through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	hijacked    bool
	body        bytes.Buffer
}

// Hijack passes the connection on to a handler that takes it over, and
// notes that the exchange has no HTTP answer to check.
func (rec *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	rec.hijacked = true
	return http.NewResponseController(rec.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the writer's flusher.
func (rec *recorder) Unwrap() http.ResponseWriter {
	return rec.ResponseWriter
}

func (rec *recorder) WriteHeader(status int) {
	if !rec.wroteHeader {
		rec.status, rec.wroteHeader = status, true
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.wroteHeader = true
	rec.body.Write(p)
	return rec.ResponseWriter.Write(p)
}
