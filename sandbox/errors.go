// Package sandbox holds the domain of the Test-Campaign Service: its records,
// their validation and lifecycle rules, and the errors the API reports. It knows
// nothing of HTTP or of how records are stored.
package sandbox

import (
	"errors"
	"fmt"
)

// Error codes the API reports in error.code.
const (
	ErrInvalidAPIKey           = "INVALID_API_KEY"
	ErrValidation              = "VALIDATION_ERROR"
	ErrInvalidJSON             = "INVALID_JSON"
	ErrInvalidParameter        = "INVALID_PARAMETER"
	ErrNotFound                = "NOT_FOUND"
	ErrMethodNotAllowed        = "METHOD_NOT_ALLOWED"
	ErrInvalidStatusTransition = "INVALID_STATUS_TRANSITION"
	ErrConflict                = "CONFLICT"
	ErrLimitReached            = "LIMIT_REACHED"
	ErrRequestTimeout          = "REQUEST_TIMEOUT"
	ErrURITooLong              = "URI_TOO_LONG"
	ErrPayloadTooLarge         = "PAYLOAD_TOO_LARGE"
	ErrUnsupportedMediaType    = "UNSUPPORTED_MEDIA_TYPE"
	ErrRateLimitExceeded       = "RATE_LIMIT_EXCEEDED"
	ErrInternal                = "INTERNAL_ERROR"
	// ErrHTTPSRequired answers plain HTTP sent to a sandbox serving HTTPS.
	ErrHTTPSRequired = "HTTPS_REQUIRED"
)

// Error is an error the API reports to its caller. Any other error is internal
// and reaches the caller only as INTERNAL_ERROR.
type Error struct {
	Code    string
	Message string
	// Details lists every invalid field of a VALIDATION_ERROR.
	Details []FieldError
}

// FieldError names one invalid field of a request and why it is invalid.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the *Error in err's chain, or an INTERNAL_ERROR that hides
// err's text from the caller.
func AsError(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	return Errorf(ErrInternal, "internal error")
}

// fieldErrors collects the invalid fields of one request, so a caller learns
// about all of them at once instead of fixing one per round trip.
type fieldErrors []FieldError

func (fe *fieldErrors) add(field, format string, args ...any) {
	*fe = append(*fe, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// err returns nil when no field was invalid.
func (fe fieldErrors) err() error {
	if len(fe) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d invalid fields", len(fe))
	if len(fe) == 1 {
		msg = fmt.Sprintf("%s %s", fe[0].Field, fe[0].Message)
	}
	return &Error{Code: ErrValidation, Message: msg, Details: fe}
}
