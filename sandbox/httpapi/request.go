package httpapi

import (
	"io"
	"mime"
	"net/http"

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
	// r.Body is already limited by limitBody; the *http.MaxBytesError it
	// returns is turned into PAYLOAD_TOO_LARGE by writeError.
	return io.ReadAll(r.Body)
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
