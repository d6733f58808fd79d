package conformance_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var cutValue = regexp.MustCompile(`(\w{16})\w*…\(cut\)`)

// boundProofs break one documented rule each of error codes, bounds and
// budgets.
func boundProofs() []proof {
	return []proof{
		{
			name: "a documented code on another status", rule: "ERR-5",
			caught: []string{"A wrong method is 405 METHOD_NOT_ALLOWED with Allow"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusMethodNotAllowed {
					r.status = http.StatusBadRequest
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("400") })
				}
			}),
		},
		{
			name: "an undocumented code", rule: "ERR-4",
			caught: []string{"Invalid fields are 400 VALIDATION_ERROR with one detail per field"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) {
					if e["code"] == "VALIDATION_ERROR" {
						e["code"] = "BAD_REQUEST"
					}
				})
			}),
		},
		{
			name: "the controls' headers without their scope", rule: "RATE-14",
			caught: []string{"The controls carry their own budget's headers"},
			wrap: answers(func(req *http.Request, r *response) {
				if strings.HasPrefix(req.URL.Path, "/_sandbox/") {
					r.header.Del("X-RateLimit-Scope")
				}
			}),
		},
		{
			name: "the reset of the hour's window beside the minute's counts", rule: "RATE-9", opts: frozen,
			caught: []string{"The headers describe the window with the fewest requests left, the minute's"},
			wrap: answers(func(_ *http.Request, r *response) {
				if date, err := http.ParseTime(r.header.Get("Date")); err == nil && r.header.Get("X-RateLimit-Reset") != "" {
					// In an hour's last minute its end is the minute's: the
					// hour after is taken then, so that the break shows at
					// any time of day.
					end := date.Truncate(time.Hour).Add(time.Hour)
					if end.Sub(date) <= time.Minute {
						end = end.Add(time.Hour)
					}
					r.header.Set("X-RateLimit-Reset", strconv.FormatInt(end.Unix(), 10))
				}
			}),
		},
		{
			name: "a request target of 8 KiB refused", rule: "ERR-20",
			caught: []string{"A request target over 8 KiB is 414 URI_TOO_LONG, and one of 8 KiB is read"},
			wrap: answers(func(req *http.Request, r *response) {
				if len(req.RequestURI) >= 8192 {
					r.status = http.StatusRequestURITooLong
					r.body = []byte(`{"success":false,"error":{"code":"URI_TOO_LONG","message":"the request target is too long","status":414}}`)
				}
			}),
		},
		{
			name: "an echoed value cut to 16 characters", rule: "SHR-10",
			caught: []string{"A value echoed in an error message is cut to 64 characters and marked as cut"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) {
					e["message"] = cutValue.ReplaceAllString(toString(e["message"]), "$1…(cut)")
				})
			}),
		},
		{
			name: "a change naming nothing accepted", rule: "BUG-7",
			caught: []string{"A change that names neither status nor resolution is refused, and the bug is unchanged"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPatch && r.status == http.StatusBadRequest && strings.Contains(string(r.body), "status or resolution is required") {
					r.status = http.StatusOK
					r.body = []byte(`{"success":true,"data":{}}`)
				}
			}),
		},
		{
			name: "a creation takes the status it is sent", rule: "CMP-16",
			caught: []string{"No request moves a campaign out of draft"},
			wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					var in struct{ Status string }
					if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" && json.Unmarshal(body, &in) == nil && in.Status != "" {
						r.data(func(d map[string]any) { d["status"] = in.Status })
					}
				})
			},
		},
		{
			name: "the clock control reads the machine's time", rule: "CLK-8", opts: frozen,
			caught: []string{"The clock control reads the caller's time, frozen, and its move"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/clock") {
					r.data(func(d map[string]any) { d["now"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z") })
				}
			}),
		},
	}
}
