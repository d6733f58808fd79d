package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/testcampaign/kit/sandbox"
)

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

// writeJSON is the only place a response body is written, so every response,
// success or error, is an envelope with a JSON content type.
func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	// The header is gone; a failed write means the client left.
	_ = enc.Encode(body)
}

func writeData(w http.ResponseWriter, data any) {
	writeJSON(w, http.StatusOK, successEnvelope{Success: true, Data: data})
}

// writeError writes err as an error envelope whose error.status is the HTTP
// status. Errors that are not *sandbox.Error become INTERNAL_ERROR, and their
// text, which may describe internals, stays in the log.
func writeError(w http.ResponseWriter, err error) {
	apiErr := sandbox.AsError(err)
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		apiErr = sandbox.Errorf(sandbox.ErrPayloadTooLarge, "request body is larger than %d bytes", maxBytes.Limit)
	}
	if apiErr.Code == sandbox.ErrInvalidAPIKey {
		w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
	}
	writeJSON(w, apiErr.Status(), errorEnvelope{Error: errorBody{
		Code: apiErr.Code, Message: apiErr.Message, Status: apiErr.Status(), Details: apiErr.Details,
	}})
}
