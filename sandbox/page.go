package sandbox

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
)

// Page sizes.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// PageRequest asks for one page of a list, newest first.
type PageRequest struct {
	Limit int
	// Before is the sequence number below which the page starts; 0 starts at
	// the newest record.
	Before uint64
}

// Page is one page of a list, as the API returns it.
type Page[T any] struct {
	Items      []T     `json:"items"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

// cursorPrefix versions the cursor format, so a change to it can reject old
// cursors clearly instead of misreading them.
const cursorPrefix = "c1."

// NewPage returns a page of items; lastSeq is the sequence number of the last
// item, where the next page starts.
func NewPage[T any](items []T, hasMore bool, lastSeq uint64) Page[T] {
	page := Page[T]{Items: items, HasMore: hasMore}
	if page.Items == nil {
		page.Items = []T{}
	}
	if hasMore {
		cursor := base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatUint(lastSeq, 10)))
		page.NextCursor = &cursor
	}
	return page
}

// ParsePageRequest reads the limit and cursor query parameters; empty values
// take the defaults. It returns an INVALID_PARAMETER error for any other
// value it cannot use.
func ParsePageRequest(limit, cursor string) (PageRequest, error) {
	req := PageRequest{Limit: DefaultPageSize}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > MaxPageSize {
			return req, Errorf(ErrInvalidParameter, "limit must be an integer from 1 to %d (got %q)", MaxPageSize, Echo(limit))
		}
		req.Limit = n
	}
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		seq, ok := strings.CutPrefix(string(raw), cursorPrefix)
		n, convErr := strconv.ParseUint(seq, 10, 64)
		if err != nil || !ok || convErr != nil || n == 0 {
			return req, Errorf(ErrInvalidParameter, "cursor is not one this API returned; pass nextCursor from the previous page")
		}
		req.Before = n
	}
	return req, nil
}

func checkParameter(name, value string, allowed []string) error {
	if value == "" || slices.Contains(allowed, value) {
		return nil
	}
	return Errorf(ErrInvalidParameter, "%s must be one of %s (got %q)", name, strings.Join(allowed, ", "), Echo(value))
}

// matches reports whether a record's value passes a filter value; an empty
// filter passes everything.
func matches(filter, value string) bool {
	return filter == "" || filter == value
}
