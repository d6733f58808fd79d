// Package wire holds what every part of the kit speaks: one exchange of a
// request and its answer, JSON decoded with numbers as written, dotted JSON
// paths and the values they find, timestamps, key redaction, and the kinds
// of error that mean the kit could not judge.
package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// ErrConnection marks failures to talk to the deployment at all, as opposed
// to answers that deviate from the spec; the runner ranks them as errors.
var ErrConnection = errors.New("connection error")

// Exchange is one request and its response, kept so that later steps can
// check it and the report can show what was sent and what came back.
type Exchange struct {
	Method     string
	URL        string
	ReqHeader  http.Header
	ReqBody    []byte
	Status     int
	Header     http.Header
	Body       []byte
	parsed     any
	parseErr   error
	parseTried bool
}

// JSON returns the decoded body, numbers kept as json.Number so that integers,
// decimals and their exact spelling can be told apart.
func (e *Exchange) JSON() (any, error) {
	if !e.parseTried {
		e.parseTried = true
		e.parsed, e.parseErr = DecodeJSON(e.Body)
	}
	return e.parsed, e.parseErr
}

func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("body is not JSON: trailing data after the first value")
	}
	return v, nil
}

func RandomToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Truncate cuts s to at most n bytes, marking the cut, never inside a
// character.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut at a character boundary: half a character is not text.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ErrUsage marks a configuration or feature the kit cannot run (a bad flag, a
// feature misusing the step library): the author's mistake, not a deviation
// of the deployment.
var ErrUsage = errors.New("usage error")

// MaxBody bounds what the kit reads of one answer, so that a deployment
// streaming without end cannot exhaust its memory.
const MaxBody = 8 << 20
