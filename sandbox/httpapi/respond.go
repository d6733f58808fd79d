package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"sync"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
)

// codeStatuses is the one place that ties an error code to its HTTP status, so
// error.status and the response status can never disagree.
var codeStatuses = map[string]int{
	sandbox.ErrInvalidAPIKey:           http.StatusUnauthorized,
	sandbox.ErrValidation:              http.StatusBadRequest,
	sandbox.ErrInvalidJSON:             http.StatusBadRequest,
	sandbox.ErrInvalidParameter:        http.StatusBadRequest,
	sandbox.ErrNotFound:                http.StatusNotFound,
	sandbox.ErrMethodNotAllowed:        http.StatusMethodNotAllowed,
	sandbox.ErrRequestTimeout:          http.StatusRequestTimeout,
	sandbox.ErrInvalidStatusTransition: http.StatusConflict,
	sandbox.ErrConflict:                http.StatusConflict,
	sandbox.ErrLimitReached:            http.StatusConflict,
	sandbox.ErrPayloadTooLarge:         http.StatusRequestEntityTooLarge,
	sandbox.ErrURITooLong:              http.StatusRequestURITooLong,
	sandbox.ErrUnsupportedMediaType:    http.StatusUnsupportedMediaType,
	sandbox.ErrRateLimitExceeded:       http.StatusTooManyRequests,
	sandbox.ErrInternal:                http.StatusInternalServerError,
	sandbox.ErrHTTPSRequired:           http.StatusBadRequest,
}

// statusOf is the HTTP status that goes with an error code.
func statusOf(code string) int {
	if status, ok := codeStatuses[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

type successEnvelope struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

type errorEnvelope struct {
	Success bool      `json:"success"`
	Error   errorBody `json:"error"`
}

type errorBody struct {
	Code    string               `json:"code"`
	Message string               `json:"message"`
	Status  int                  `json:"status"`
	Details []sandbox.FieldError `json:"details,omitempty"`
}

// internalErrorBody is written when even an envelope cannot be encoded.
var internalErrorBody = []byte(`{"success":false,"error":{"code":"INTERNAL_ERROR","message":"internal error","status":500}}` + "\n")

// jsonContentType is the Content-Type of every JSON answer, set as
// Header.Set would store it without making it anew. Responses share it: a
// header's values are replaced, never written in place.
var jsonContentType = []string{"application/json"}

// writeJSON is the only place a response body is written, so every response,
// success or error, is an envelope with a JSON content type. The body is
// encoded before the status is written, so that a body that cannot be
// encoded still gets a 500 envelope rather than a 200 and half a body.
func writeJSON(w http.ResponseWriter, status int, body any) error {
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer putEncodeBuffer(buf)
	return writeEncoded(w, status, buf, encodeBody(buf, body))
}

// writeEncoded writes what buf holds, or, if err says it could not be
// encoded, a 500 envelope.
func writeEncoded(w http.ResponseWriter, status int, buf *bytes.Buffer, err error) error {
	encoded := buf.Bytes()
	if err != nil {
		status, encoded = http.StatusInternalServerError, internalErrorBody
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	// The header is gone; a failed write means the client left.
	_, _ = w.Write(encoded)
	return err
}

// encodeBody writes body and a newline into buf: by hand for the records
// that reads return most, with encoding/json for the rest.
func encodeBody(buf *bytes.Buffer, body any) error {
	if env, ok := body.(successEnvelope); ok && env.Success {
		return encodeSuccess(buf, env.Data)
	}
	return encodeWithJSON(buf, body)
}

// encodeSuccess writes the success envelope of data and a newline into buf.
// The envelope is made only for encoding/json: made for every answer, it was
// an allocation of its own.
func encodeSuccess(buf *bytes.Buffer, data any) error {
	// Appending into the buffer's spare room and writing that back copies
	// nothing when the room suffices, and grows the buffer for the next
	// response when it did not.
	if appended, ok := appendSuccess(buf.AvailableBuffer(), data); ok {
		buf.Write(appended)
		return nil
	}
	return encodeWithJSON(buf, successEnvelope{Success: true, Data: data})
}

// encodeWithJSON writes body and a newline into buf with encoding/json.
func encodeWithJSON(buf *bytes.Buffer, body any) error {
	enc := json.NewEncoder(buf)
	// Names and descriptions come back as sent: "R&D <beta>", not
	// "R\u0026D \u003cbeta\u003e".
	enc.SetEscapeHTML(false)
	return enc.Encode(body)
}

// encodeBuffers reuse the buffers responses are encoded in, so that a
// request does not grow a new one from nothing and leave it to the
// collector.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer kept for reuse: a rare page of
// large bugs should not pin its buffer for good.
const maxPooledBuffer = 64 << 10

func putEncodeBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBuffer {
		return
	}
	buf.Reset()
	encodeBuffers.Put(buf)
}

func (s *Server) writeData(w http.ResponseWriter, r *http.Request, data any) {
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer putEncodeBuffer(buf)
	if err := writeEncoded(w, http.StatusOK, buf, encodeSuccess(buf, data)); err != nil {
		s.logger.ErrorContext(r.Context(), "encode response", "path", loggedPath(r), "error", err)
	}
}

// maxMessageBytes bounds an error message. Values quoted in messages are cut
// where they are quoted; this is the bound for any that were not, so that no
// error answer grows with its request.
const maxMessageBytes = 1024

// boundedMessage is msg with any key redacted, cut to maxMessageBytes.
func boundedMessage(msg string) string {
	msg = sandbox.RedactKeys(msg)
	if cut, ok := accounts.Prefix(msg, maxMessageBytes); ok {
		return cut + sandbox.CutMark
	}
	return msg
}

// boundedDetails applies boundedMessage to each detail. There is at most one
// detail per field a decoder knows, so their number is bounded already.
func boundedDetails(details []sandbox.FieldError) []sandbox.FieldError {
	bounded := make([]sandbox.FieldError, len(details))
	for i, d := range details {
		bounded[i] = sandbox.FieldError{Field: d.Field, Message: boundedMessage(d.Message)}
	}
	if len(details) == 0 {
		return nil
	}
	return bounded
}

// writeError writes err as an error envelope whose error.status is the HTTP
// status. Errors that are not *sandbox.Error become INTERNAL_ERROR, and their
// text, which may describe internals, goes only to the log: the one place a
// request is logged at ERROR, since every other error is the client's.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	apiErr := sandbox.AsError(err)
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &maxBytes):
		apiErr = sandbox.Errorf(sandbox.ErrPayloadTooLarge, "request body is larger than %d bytes", maxBytes.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		apiErr = sandbox.Errorf(sandbox.ErrRequestTimeout, "the request body did not arrive in time")
	case apiErr.Code == sandbox.ErrInternal:
		s.logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", loggedPath(r), "error", err)
	}
	if apiErr.Code == sandbox.ErrInvalidAPIKey {
		w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
	}
	status, envelope := envelopeOf(apiErr)
	_ = writeJSON(w, status, envelope)
}

// envelopeOf is the error envelope of apiErr and the status it goes with.
func envelopeOf(apiErr *sandbox.Error) (int, errorEnvelope) {
	status := statusOf(apiErr.Code)
	return status, errorEnvelope{Error: errorBody{
		Code: apiErr.Code, Message: boundedMessage(apiErr.Message), Status: status, Details: boundedDetails(apiErr.Details),
	}}
}

// ErrorEnvelope is the status and the body, JSON ending in a newline, of
// the error envelope of apiErr, for an answer written where no handler
// runs: on a connection the HTTP server cannot serve.
func ErrorEnvelope(apiErr *sandbox.Error) (status int, body []byte) {
	status, envelope := envelopeOf(apiErr)
	var buf bytes.Buffer
	if err := encodeBody(&buf, envelope); err != nil {
		return http.StatusInternalServerError, internalErrorBody
	}
	return status, buf.Bytes()
}
