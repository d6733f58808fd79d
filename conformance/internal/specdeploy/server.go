package specdeploy

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Deployment is the API as an http.Handler.
type Deployment struct {
	opts Options
	now  func() time.Time

	mu       sync.Mutex
	seq      int
	accounts map[string]*account
}

type account struct {
	campaigns []record
	bugs      []record
	webhooks  []record
	testers   []record
	limiter   *limiter
}

// record is a stored resource with its fields in the order they are
// written, numbers kept as they were sent.
type record struct {
	id      string
	created time.Time
	fields  map[string]any
}

// New returns a deployment reading the spec as opts say.
func New(opts Options) *Deployment {
	return &Deployment{opts: opts, now: time.Now, accounts: map[string]*account{}}
}

// apiError is a failure answer before the envelope is written.
type apiError struct {
	status  int
	code    string
	message string
}

var ownCodes = map[string]string{
	"VALIDATION_ERROR":   "E_FIELD",
	"INVALID_JSON":       "E_BODY_SYNTAX",
	"NOT_FOUND":          "E_NO_SUCH_THING",
	"RATE_LIMITED":       "E_SLOW_DOWN",
	"METHOD_NOT_ALLOWED": "E_VERB",
	"CONFLICT":           "E_TAKEN",
	"QUOTA_EXCEEDED":     "E_FULL",
	"FORBIDDEN":          "E_NO_CREDENTIALS",
}

func (d *Deployment) fail(status int, code, format string, args ...any) *apiError {
	if c, ok := ownCodes[code]; ok && d.opts.OwnErrorCodes {
		code = c
	}
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// answer is what a handler produced, before the envelope and headers.
type answer struct {
	status int
	data   any
	err    *apiError
}

func (d *Deployment) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if d.opts.Break == BreakServedWithoutV1 && !strings.HasPrefix(path, "/v1/") && !strings.HasPrefix(path, "/_") {
		path = "/v1" + path
	}
	if !strings.HasPrefix(path, "/v1/") {
		d.write(w, r, answer{err: d.fail(http.StatusNotFound, "NOT_FOUND", "no route %s", r.URL.Path)}, nil)
		return
	}
	open := d.opts.Break == BreakAnalyticsUnprotected && path == "/v1/analytics"
	key, aerr := d.authenticate(r)
	if aerr != nil && !open {
		d.write(w, r, answer{err: aerr}, nil)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	acct := d.account(key)
	now := d.now()
	q := acct.limiter.take(now)
	if !q.allowed {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(q.reset.Sub(now).Seconds()+0.999))))
		d.write(w, r, answer{err: d.fail(http.StatusTooManyRequests, "RATE_LIMITED", "rate limit exceeded")}, &q)
		return
	}
	a := d.route(r, path, acct, now)
	headers := &q
	switch {
	case d.opts.Break == BreakNoRateHeadersBeta && (path == "/v1/testers" || path == "/v1/analytics"),
		d.opts.Break == BreakNoRateHeadersCreate && path == "/v1/campaigns" && r.Method == http.MethodPost,
		d.opts.Break == BreakNoRateHeadersHook && path == "/v1/webhooks" && a.err == nil:
		headers = nil
	}
	d.write(w, r, a, headers)
}

var bearer = regexp.MustCompile(`^(?i:bearer) +(\S+)$`)

// authenticate returns the key of an accepted request.
func (d *Deployment) authenticate(r *http.Request) (string, *apiError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		switch {
		case d.opts.Break == BreakNoKeyAccepted:
			return "anonymous", nil
		case d.opts.MissingHeaderIs403:
			return "", d.fail(http.StatusForbidden, "FORBIDDEN", "credentials required")
		}
		return "", d.refuse("no Authorization header")
	}
	m := bearer.FindStringSubmatch(h)
	key := ""
	switch {
	case m != nil:
		key = m[1]
	case d.opts.Break == BreakBareKeyAccepted && !strings.Contains(h, " "):
		key = h
	default:
		return "", d.refuse("the Authorization header is not a Bearer token")
	}
	for _, prefix := range d.acceptedPrefixes() {
		if secret, ok := strings.CutPrefix(key, prefix); ok && secret != "" {
			return key, nil
		}
	}
	return "", d.refuse("the API key is invalid or expired")
}

func (d *Deployment) acceptedPrefixes() []string {
	if d.opts.LiveKeysAccepted {
		return []string{"svc_test_", "svc_live_"}
	}
	return []string{"svc_test_"}
}

func (d *Deployment) refuse(message string) *apiError {
	switch d.opts.Break {
	case BreakInvalidKey403:
		return &apiError{status: http.StatusForbidden, code: "INVALID_API_KEY", message: message}
	case BreakInvalidKeyCode:
		return &apiError{status: http.StatusUnauthorized, code: "UNAUTHORIZED", message: message}
	}
	return &apiError{status: http.StatusUnauthorized, code: "INVALID_API_KEY", message: message}
}

func (d *Deployment) account(key string) *account {
	if a, ok := d.accounts[key]; ok {
		return a
	}
	a := &account{limiter: newLimiter(d.opts)}
	now := d.now()
	sample := d.newRecord("campaign", now, map[string]any{
		"name": "Sample campaign", "platform": "ios", "testersRequired": json.Number("3"),
		"rewardPerBug": json.Number("2.50"), "status": "active",
	})
	a.campaigns = append(a.campaigns, sample)
	for i, title := range []string{"Crash on launch", "Typo on the settings screen"} {
		a.bugs = append(a.bugs, d.newRecord("bug", now, map[string]any{
			"campaignId": sample.id, "title": title, "status": d.bugStatuses()[i], "resolution": nil,
		}))
	}
	for _, name := range []string{"Ada", "Grace", "Linus"} {
		a.testers = append(a.testers, d.newRecord("tester", now, map[string]any{"name": name, "platform": "ios"}))
	}
	d.accounts[key] = a
	return a
}

func (d *Deployment) bugStatuses() []string {
	if d.opts.OwnBugStatuses {
		return []string{"new", "triaged", "resolved", "rejected"}
	}
	return []string{"open", "confirmed", "in_progress", "fixed", "closed"}
}

var idPrefixes = map[string]string{"campaign": "cmp-", "bug": "bug-", "webhook": "wh-", "tester": "tst-"}

func (d *Deployment) newID(kind string) string {
	if d.opts.UUIDIDs {
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
		h := hex.EncodeToString(b[:])
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	d.seq++
	return fmt.Sprintf("%s%06d", idPrefixes[kind], d.seq)
}

var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func (d *Deployment) newRecord(kind string, now time.Time, fields map[string]any) record {
	id := d.newID(kind)
	fields["id"] = id
	fields["createdAt"] = d.timestamp(now)
	if d.opts.ExtraFields {
		fields["updatedAt"] = d.timestamp(now)
		fields["kind"] = kind
	}
	return record{id: id, created: now, fields: fields}
}

func (d *Deployment) timestamp(t time.Time) string {
	t = t.UTC()
	switch {
	case d.opts.PythonISOFormat:
		return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
	case d.opts.BasicISO8601:
		return t.Format("20060102T150405Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// route answers an authenticated request under /v1.
func (d *Deployment) route(r *http.Request, path string, acct *account, now time.Time) answer {
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	notAllowed := answer{err: d.fail(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "%s is not allowed on %s", r.Method, path)}
	switch {
	case len(parts) == 1 && parts[0] == "campaigns":
		switch r.Method {
		case http.MethodGet:
			return d.list(r, "campaigns", d.listed(acct))
		case http.MethodPost:
			return d.createCampaign(r, acct, now)
		}
		return notAllowed
	case len(parts) == 2 && parts[0] == "campaigns":
		if r.Method != http.MethodGet {
			return notAllowed
		}
		return d.getCampaign(parts[1], acct)
	case len(parts) == 1 && parts[0] == "bugs":
		if r.Method != http.MethodGet {
			return notAllowed
		}
		return d.list(r, "bugs", acct.bugs)
	case len(parts) == 2 && parts[0] == "bugs":
		if r.Method != http.MethodPatch {
			return notAllowed
		}
		return d.patchBug(r, parts[1], acct)
	case len(parts) == 1 && parts[0] == "webhooks":
		if r.Method != http.MethodPost {
			return notAllowed
		}
		return d.registerWebhook(r, acct, now)
	case len(parts) == 1 && parts[0] == "testers":
		if r.Method != http.MethodGet || d.opts.Break == BreakTestersMissing {
			return answer{err: d.fail(http.StatusNotFound, "NOT_FOUND", "no route %s", path)}
		}
		return d.list(r, "testers", acct.testers)
	case len(parts) == 1 && parts[0] == "analytics":
		if r.Method != http.MethodGet {
			return notAllowed
		}
		if d.opts.Break == BreakDataNullAnalytics {
			return answer{status: http.StatusOK}
		}
		return answer{status: http.StatusOK, data: map[string]any{
			"campaigns": len(acct.campaigns), "bugs": len(acct.bugs), "testers": len(acct.testers),
		}}
	}
	return answer{err: d.fail(http.StatusNotFound, "NOT_FOUND", "no route %s", path)}
}

func (d *Deployment) listed(acct *account) []record {
	if d.opts.Break == BreakCreatedNotListed {
		return acct.campaigns[:1]
	}
	return acct.campaigns
}

func (d *Deployment) list(r *http.Request, name string, all []record) answer {
	items := make([]map[string]any, 0, len(all))
	for i := range all {
		rec := all[len(all)-1-i]
		if d.opts.OldestFirst {
			rec = all[i]
		}
		items = append(items, d.shown(rec))
	}
	q := r.URL.Query()
	key := "items"
	if d.opts.ListUnderResourceName {
		key = name
	}
	if d.opts.PageNumberPaging {
		page, perPage := intParam(q.Get("page"), 1), intParam(q.Get("perPage"), 25)
		if page < 1 || perPage < 1 || perPage > 50 {
			return answer{err: d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "page and perPage must be positive, perPage at most 50")}
		}
		from := min((page-1)*perPage, len(items))
		to := min(from+perPage, len(items))
		return d.listAnswer(map[string]any{key: items[from:to], "page": page, "perPage": perPage, "total": len(items)})
	}
	limit := intParam(q.Get("limit"), 20)
	if limit < 1 || limit > 100 {
		return answer{err: d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "limit must be between 1 and 100")}
	}
	from := 0
	if c := q.Get("cursor"); c != "" {
		from = intParam(c, -1)
		if from < 0 || from > len(items) {
			return answer{err: d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "bad cursor")}
		}
	}
	to := min(from+limit, len(items))
	var next any
	if to < len(items) {
		next = strconv.Itoa(to)
	}
	return d.listAnswer(map[string]any{key: items[from:to], "nextCursor": next})
}

func (d *Deployment) listAnswer(data map[string]any) answer {
	if d.opts.Break == BreakDataArray {
		return answer{status: http.StatusOK, data: []any{data}}
	}
	return answer{status: http.StatusOK, data: data}
}

func intParam(s string, fallback int) int {
	if s == "" {
		return fallback
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// shown is a record as an answer shows it.
func (d *Deployment) shown(rec record) map[string]any {
	out := make(map[string]any, len(rec.fields))
	for k, v := range rec.fields {
		out[k] = v
	}
	switch d.opts.Break {
	case BreakCreatedAtUnix:
		out["createdAt"] = rec.created.Unix()
	case BreakCreatedAtNotISO:
		out["createdAt"] = rec.created.UTC().Format("02/01/2006 15:04")
	case BreakIDNumber:
		n, _ := strconv.Atoi(strings.TrimLeft(rec.id, "cmpbugwhtsr-"))
		out["id"] = n
	}
	return out
}

// decode reads a JSON object body, numbers as written.
func (d *Deployment) decode(r *http.Request) (map[string]any, *apiError) {
	var body map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil || body == nil {
		return nil, d.fail(http.StatusBadRequest, "INVALID_JSON", "the body is not a JSON object")
	}
	return body, nil
}

func (d *Deployment) wrongType(field, want string) *apiError {
	status := http.StatusBadRequest
	if d.opts.WrongType422 {
		status = http.StatusUnprocessableEntity
	}
	return d.fail(status, "VALIDATION_ERROR", "%s must be %s", field, want)
}

func (d *Deployment) createCampaign(r *http.Request, acct *account, now time.Time) answer {
	body, aerr := d.decode(r)
	if aerr != nil {
		return answer{err: aerr}
	}
	name, ok := body["name"].(string)
	if !ok || strings.TrimSpace(name) == "" {
		return answer{err: d.wrongType("name", "a non-empty string")}
	}
	platform, ok := body["platform"].(string)
	if !ok || platform == "" {
		return answer{err: d.wrongType("platform", "a non-empty string")}
	}
	testers, ok := body["testersRequired"].(json.Number)
	n, err := testers.Int64()
	if !ok || err != nil {
		return answer{err: d.wrongType("testersRequired", "an integer")}
	}
	reward, ok := body["rewardPerBug"].(json.Number)
	f, err := reward.Float64()
	if !ok || err != nil {
		return answer{err: d.wrongType("rewardPerBug", "a number")}
	}
	least := int64(1)
	if d.opts.MinimumFive {
		least = 5
	}
	switch {
	case n < least:
		return answer{err: d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "testersRequired must be at least %d", least)}
	case f < float64(least) && d.opts.MinimumFive, f < 0:
		return answer{err: d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "rewardPerBug is too small")}
	case d.opts.MobilePlatformsOnly && platform != "ios" && platform != "android":
		return answer{err: d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "platform must be ios or android")}
	case d.opts.QuotaOf20 && len(acct.campaigns) >= 20:
		return answer{err: d.fail(http.StatusForbidden, "QUOTA_EXCEEDED", "a key holds at most 20 campaigns")}
	}
	if d.opts.UniqueNamesPerAccount {
		for _, c := range acct.campaigns {
			if c.fields["name"] == name {
				return answer{err: d.fail(http.StatusConflict, "CONFLICT", "a campaign with this name exists")}
			}
		}
	}
	status := "draft"
	if d.opts.Break == BreakNotDraft {
		status = "pending"
	}
	rec := d.newRecord("campaign", now, map[string]any{
		"name": name, "platform": platform, "testersRequired": testers, "rewardPerBug": reward, "status": status,
	})
	acct.campaigns = append(acct.campaigns, rec)
	a := answer{status: http.StatusOK, data: d.shown(rec)}
	if d.opts.Created201 {
		a.status = http.StatusCreated
	}
	if d.opts.Break == BreakCreateAnswers500 {
		a.status = http.StatusInternalServerError
	}
	if d.opts.Break == BreakNameNotEchoed {
		delete(a.data.(map[string]any), "name")
	}
	return a
}

func (d *Deployment) checkID(id string) *apiError {
	if d.opts.MalformedIDIs400 && !uuidForm.MatchString(id) {
		return d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "an id is a UUID")
	}
	return nil
}

func (d *Deployment) getCampaign(id string, acct *account) answer {
	if aerr := d.checkID(id); aerr != nil {
		return answer{err: aerr}
	}
	for _, c := range acct.campaigns {
		if c.id == id && d.opts.Break != BreakReadBackNotFound {
			shown := d.shown(c)
			switch d.opts.Break {
			case BreakRewardString:
				shown["rewardPerBug"] = c.fields["rewardPerBug"].(json.Number).String()
			case BreakReadBackNoStatus:
				delete(shown, "status")
			}
			return answer{status: http.StatusOK, data: shown}
		}
	}
	return answer{err: d.fail(http.StatusNotFound, "NOT_FOUND", "no campaign %s", id)}
}

func (d *Deployment) patchBug(r *http.Request, id string, acct *account) answer {
	if aerr := d.checkID(id); aerr != nil {
		return answer{err: aerr}
	}
	var (
		body map[string]any
		aerr *apiError
	)
	if d.opts.OwnBugStatuses {
		if body, aerr = d.bugChange(r); aerr != nil {
			return answer{err: aerr}
		}
	}
	at := -1
	for i, b := range acct.bugs {
		if b.id == id {
			at = i
		}
	}
	if at < 0 {
		return answer{err: d.fail(http.StatusNotFound, "NOT_FOUND", "no bug %s", id)}
	}
	if !d.opts.OwnBugStatuses {
		if body, aerr = d.bugChange(r); aerr != nil {
			return answer{err: aerr}
		}
	}
	changed := record{id: id, created: acct.bugs[at].created, fields: map[string]any{}}
	for k, v := range acct.bugs[at].fields {
		changed.fields[k] = v
	}
	if d.opts.Break != BreakPatchChangesNothing {
		for k, v := range body {
			changed.fields[k] = v
		}
	}
	acct.bugs[at] = changed
	return answer{status: http.StatusOK, data: d.shown(changed)}
}

// bugChange reads a PATCH body: a status, a resolution, or both.
func (d *Deployment) bugChange(r *http.Request) (map[string]any, *apiError) {
	body, aerr := d.decode(r)
	if aerr != nil {
		return nil, aerr
	}
	change := map[string]any{}
	if s, ok := body["status"]; ok {
		str, _ := s.(string)
		if !contains(d.bugStatuses(), str) {
			return nil, d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "status must be one of %s", strings.Join(d.bugStatuses(), ", "))
		}
		change["status"] = str
	}
	if v, ok := body["resolution"]; ok {
		str, isString := v.(string)
		if v != nil && (!isString || !contains([]string{"fixed", "wont_fix", "duplicate"}, str)) {
			return nil, d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "resolution must be fixed, wont_fix, duplicate or null")
		}
		change["resolution"] = v
	}
	if len(change) == 0 {
		return nil, d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "send a status or a resolution")
	}
	return change, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *Deployment) registerWebhook(r *http.Request, acct *account, now time.Time) answer {
	body, aerr := d.decode(r)
	if aerr != nil {
		return answer{err: aerr}
	}
	field := "url"
	if d.opts.WebhookCallbackURL {
		field = "callbackUrl"
	}
	u, _ := body[field].(string)
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return answer{err: d.fail(http.StatusBadRequest, "VALIDATION_ERROR", "%s must be an http(s) URL", field)}
	}
	var secret [16]byte
	_, _ = rand.Read(secret[:])
	rec := d.newRecord("webhook", now, map[string]any{field: u, "secret": "whsec_" + hex.EncodeToString(secret[:])})
	if events, ok := body["events"]; ok {
		rec.fields["events"] = events
	}
	acct.webhooks = append(acct.webhooks, rec)
	return answer{status: http.StatusOK, data: d.shown(rec)}
}

// write sends an answer in the envelope, with the rate-limit headers of q
// when it is not nil.
func (d *Deployment) write(w http.ResponseWriter, r *http.Request, a answer, q *quota) {
	h := w.Header()
	if q != nil {
		d.rateHeaders(h, *q)
	}
	var body any
	status := a.status
	if a.err != nil {
		status = a.err.status
		if status == http.StatusUnauthorized {
			h.Set("WWW-Authenticate", `Bearer realm="api"`)
		}
		body = d.failure(a.err)
	} else {
		body = d.success(r, a.data)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
	h.Set("Content-Type", "application/json")
	if d.opts.Break == BreakTextContentType {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (d *Deployment) success(r *http.Request, data any) any {
	switch {
	case d.opts.Break == BreakNoEnvelopeOnSuccess,
		d.opts.Break == BreakPatchNoEnvelope && r.Method == http.MethodPatch,
		d.opts.Break == BreakWebhookNoEnvelope && r.URL.Path == "/v1/webhooks":
		return data
	case d.opts.Break == BreakSuccessString:
		return map[string]any{"success": "true", "data": data}
	}
	return map[string]any{"success": true, "data": data}
}

func (d *Deployment) failure(e *apiError) any {
	errObj := map[string]any{"code": e.code, "message": e.message, "status": e.status}
	switch d.opts.Break {
	case BreakErrorMessageNull:
		if e.status == http.StatusNotFound {
			errObj["message"] = nil
		}
	case BreakErrorStatusMismatch:
		errObj["status"] = http.StatusBadRequest
	case BreakErrorStatusString:
		errObj["status"] = strconv.Itoa(e.status)
	case BreakErrorWithoutCode:
		if e.status != http.StatusUnauthorized {
			delete(errObj, "code")
		}
	case BreakNoSuccessOnFailure:
		return map[string]any{"error": errObj}
	}
	return map[string]any{"success": false, "error": errObj}
}

func (d *Deployment) rateHeaders(h http.Header, q quota) {
	now := d.now()
	remaining := q.remaining
	limit := q.limit
	reset := q.reset
	switch d.opts.Break {
	case BreakRemainingCountsUp:
		remaining = q.limit - q.remaining
	case BreakRemainingOverLimit:
		remaining = q.remaining + 50
	case BreakResetInPast:
		reset = q.windowAt.Add(-time.Minute)
	case BreakLimitChanges:
		limit = max(q.remaining, 1)
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	switch {
	case d.opts.Break == BreakResetNotInteger:
		h.Set("X-RateLimit-Reset", reset.UTC().Format(http.TimeFormat))
	case d.opts.ResetUnixMillis:
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.UnixMilli(), 10))
	case d.opts.ResetSecondsUntil:
		h.Set("X-RateLimit-Reset", strconv.Itoa(max(0, int(reset.Sub(now).Seconds()+0.999))))
	default:
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	}
}
