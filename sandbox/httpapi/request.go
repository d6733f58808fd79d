package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"

	"github.com/testcampaign/kit/sandbox"
)

// MaxBodyBytes is the largest request body the API reads.
const MaxBodyBytes = 1 << 20

// readJSONBody returns the request body of a JSON request, or the error that
// explains why it cannot be used: UNSUPPORTED_MEDIA_TYPE, PAYLOAD_TOO_LARGE.
func readJSONBody(r *http.Request) ([]byte, error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return nil, sandbox.Errorf(sandbox.ErrUnsupportedMediaType,
			"request body must be sent with Content-Type: application/json (got %q)", sandbox.Echo(r.Header.Get("Content-Type")))
	}
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return body, nil
	// r.Body is limited by limitBody; writeError turns its error into
	// PAYLOAD_TOO_LARGE, and a stalled body into REQUEST_TIMEOUT.
	case errors.As(err, &tooLarge), errors.Is(err, os.ErrDeadlineExceeded):
		return nil, err
	case r.ContentLength > 0:
		// The client half-closed or dropped the connection short of the
		// body it announced: its request is incomplete, and no fault of the
		// sandbox, so a 400 that a client does not retry as it would a 5xx.
		return nil, sandbox.Errorf(sandbox.ErrInvalidJSON, "the request body ended after %d of the %d bytes its Content-Length announced", len(body), r.ContentLength)
	default:
		return nil, sandbox.Errorf(sandbox.ErrInvalidJSON, "the request body ended before it was complete")
	}
}

// parseBody reads a JSON request body and decodes it with parse, one of the
// domain's request decoders.
func parseBody[T any](r *http.Request, parse func([]byte) (T, error)) (T, error) {
	body, err := readJSONBody(r)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(body)
}

// pageRequest reads the limit and cursor query parameters.
func pageRequest(r *http.Request) (sandbox.PageRequest, error) {
	q := queryOf(r)
	return sandbox.ParsePageRequest(q.Get("limit"), q.Get("cursor"))
}
