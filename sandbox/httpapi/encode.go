package httpapi

import (
	"strconv"
	"unicode/utf8"

	"github.com/testcampaign/kit/sandbox"
)

// The appenders below write the records that reads return most, a campaign
// and a bug alone or in a page, without encoding/json's reflection: on a
// list of 20 that reflection was most of the handler's own time. Their
// bytes are exactly those encoding/json writes with HTML escaping off, as
// writeJSON encodes (TestAppendersMatchEncodingJSON and
// FuzzAppendersMatchEncodingJSON hold them to it), so a client cannot tell
// which one answered.

// appendSuccess appends the success envelope of data and its final newline,
// and reports false for data no appender writes, or cannot write as
// encoding/json would; the caller then encodes it with encoding/json.
func appendSuccess(b []byte, data any) ([]byte, bool) {
	b = append(b, `{"success":true,"data":`...)
	ok := true
	switch d := data.(type) {
	case sandbox.Campaign:
		b, ok = appendCampaign(b, &d)
	case sandbox.Bug:
		b = appendBug(b, &d)
	case sandbox.Page[sandbox.Campaign]:
		b, ok = appendPage(b, d, appendCampaign)
	case sandbox.Page[sandbox.Bug]:
		b, ok = appendPage(b, d, func(b []byte, bug *sandbox.Bug) ([]byte, bool) { return appendBug(b, bug), true })
	default:
		return b, false
	}
	return append(b, "}\n"...), ok
}

func appendPage[T any](b []byte, page sandbox.Page[T], appendItem func([]byte, *T) ([]byte, bool)) ([]byte, bool) {
	b = append(b, `{"items":`...)
	if page.Items == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range page.Items {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendItem(b, &page.Items[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"hasMore":`...)
	b = strconv.AppendBool(b, page.HasMore)
	b = append(b, `,"nextCursor":`...)
	b = appendOptionalString(b, page.NextCursor)
	return append(b, '}'), true
}

func appendCampaign(b []byte, c *sandbox.Campaign) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = appendString(b, c.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, c.Name)
	b = append(b, `,"platform":`...)
	b = appendString(b, c.Platform)
	b = append(b, `,"testersRequired":`...)
	b = strconv.AppendInt(b, int64(c.TestersRequired), 10)
	b = append(b, `,"rewardPerBug":`...)
	b, ok := appendDecimal(b, c.RewardPerBug)
	b = append(b, `,"status":`...)
	b = appendString(b, c.Status)
	b = append(b, `,"createdAt":`...)
	b = appendTime(b, c.CreatedAt)
	return append(b, '}'), ok
}

func appendBug(b []byte, bug *sandbox.Bug) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, bug.ID)
	b = append(b, `,"campaignId":`...)
	b = appendString(b, bug.CampaignID)
	b = append(b, `,"testerId":`...)
	b = appendString(b, bug.TesterID)
	b = append(b, `,"title":`...)
	b = appendString(b, bug.Title)
	b = append(b, `,"description":`...)
	b = appendString(b, bug.Description)
	b = append(b, `,"severity":`...)
	b = appendString(b, bug.Severity)
	b = append(b, `,"status":`...)
	b = appendString(b, bug.Status)
	b = append(b, `,"resolution":`...)
	b = appendOptionalString(b, bug.Resolution)
	b = append(b, `,"createdAt":`...)
	b = appendTime(b, bug.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = appendTime(b, bug.UpdatedAt)
	return append(b, '}')
}

// appendDecimal writes the literal as Decimal.MarshalJSON does, and reports
// false for one that is not a JSON number, which encoding/json refuses.
// Decoding lets no other kind in, so this is a guard, not a path.
func appendDecimal(b []byte, d sandbox.Decimal) ([]byte, bool) {
	if d == "" {
		return append(b, '0'), true
	}
	if _, ok := sandbox.ParseNumberLiteral(string(d)); !ok {
		return b, false
	}
	return append(b, d...), true
}

// appendTime writes the quoted TimeLayout text that Time.MarshalText
// returns, which needs no escaping.
func appendTime(b []byte, t sandbox.Time) []byte {
	b, _ = t.AppendText(append(b, '"'))
	return append(b, '"')
}

func appendOptionalString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off: quote,
// backslash and control characters escaped (the usual five by their short
// forms), invalid UTF-8 replaced by \ufffd, and U+2028 and U+2029 escaped
// for JavaScript's sake. encoding/json exports no way to quote one string
// into a buffer.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
