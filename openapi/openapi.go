// Package openapi checks HTTP exchanges against an OpenAPI 3.1 document: the
// sandbox's own (package document) or any other.
package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/responses"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/testcampaign/kit/openapi/document"
)

// Violation is one way an exchange breaks the document.
type Violation struct {
	// In says where: "request", "response", "request header", "response
	// header", "request query" or "route".
	In string
	// Path is the JSON path of the offending value in the body ("$" for the
	// whole body), or the name of the header or parameter.
	Path string
	// Want is what the document wanted there.
	Want string
	// Message says what was wrong, for people.
	Message string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s: %s (want %s)", v.In, v.Path, v.Message, v.Want)
}

// Validator checks requests and responses against one OpenAPI 3.1 document.
// It is safe for concurrent use.
type Validator struct {
	model     *v3.Document
	validator validator.Validator
	schemas   schema_validation.SchemaValidator
	// strict also reports the response headers InjectedFailure does not
	// declare, as the library reports those an operation does not.
	strict bool
	// requestHeaders also reports request headers the document does not
	// declare.
	requestHeaders bool
	// checking serializes every check: the library renders a shared
	// schema (a components.responses entry, a $ref'd schema) on each
	// validation of a request or response that uses it, and that
	// rendering is not safe for concurrent use.
	checking sync.Mutex
}

// Load parses an OpenAPI 3.1 document, in YAML or JSON. It fails if the
// document cannot be parsed or modelled; whether it is valid OpenAPI is
// Validate's question.
func Load(doc []byte, opts ...Option) (*Validator, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// The library logs what it cannot model; Load and Validate return it.
	quiet := slog.New(slog.DiscardHandler)
	parsed, err := libopenapi.NewDocumentWithConfiguration(doc, &datamodel.DocumentConfiguration{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("parse OpenAPI document: %w", err)
	}
	if !strings.HasPrefix(parsed.GetVersion(), "3.") {
		return nil, fmt.Errorf("parse OpenAPI document: version %q is not OpenAPI 3", parsed.GetVersion())
	}
	libOpts := []config.Option{config.WithFormatAssertions(), config.WithLogger(quiet)}
	if o.strict {
		libOpts = append(libOpts, config.WithStrictMode())
	}
	if len(o.ignoredHeaders) > 0 {
		libOpts = append(libOpts, config.WithStrictIgnoredHeadersExtra(o.ignoredHeaders...))
	}
	v, errs := validator.NewValidator(parsed, libOpts...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("model OpenAPI document: %w", errors.Join(errs...))
	}
	model, err := parsed.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("model OpenAPI document: %w", err)
	}
	return &Validator{
		model: &model.Model, validator: v, schemas: schema_validation.NewSchemaValidatorWithLogger(quiet),
		strict: o.strict, requestHeaders: o.strictRequestHeaders,
	}, nil
}

// Default returns a validator of this package's document.
func Default(opts ...Option) (*Validator, error) {
	return Load(document.YAML(), opts...)
}

// Option changes how a Validator checks.
type Option func(*options)

type options struct {
	strict               bool
	strictRequestHeaders bool
	ignoredHeaders       []string
}

// Strict also reports response properties and headers that the document
// does not declare, even where it allows more. The drift check of
// the sandbox's own document uses it, so that nothing the sandbox sends goes
// undocumented; a deployment checked against a published document usually
// should not, since clients must tolerate additions.
//
// Request headers the document does not declare are still allowed: clients
// send their own (Idempotency-Key, traceparent, a retry counter), and a
// server ignores what it does not know. StrictRequestHeaders reports them
// too.
func Strict() Option {
	return func(o *options) { o.strict = true }
}

// StrictRequestHeaders is Strict that also reports every request header the
// document does not declare, for a client whose headers are all meant to be
// part of the API.
func StrictRequestHeaders() Option {
	return func(o *options) { o.strict, o.strictRequestHeaders = true, true }
}

// IgnoreHeaders names headers that Strict and StrictRequestHeaders let pass
// undeclared, beside the standard ones they always do: a client's own
// header (an SDK's version, a trace id) that is not part of the API.
func IgnoreHeaders(names ...string) Option {
	return func(o *options) { o.ignoredHeaders = append(o.ignoredHeaders, names...) }
}

// Operations returns the document's operations as "METHOD /path/{param}",
// in the order the document lists them.
func (v *Validator) Operations() []string {
	var ops []string
	if v.model.Paths == nil {
		return nil
	}
	for path, item := range v.model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	return ops
}

// Validate checks the document itself against the OpenAPI schema of its
// version.
func (v *Validator) Validate() []Violation {
	_, errs := v.validator.ValidateDocument()
	return violations("document", errs)
}

// Check validates one exchange: the response always, and the request when
// the response is a success. A refused request is expected to break the
// document (that is why it was refused), so only the refusal itself, its
// status, headers and error body, is checked. reqBody and resBody are the
// bodies already read from req and res, whose Body fields are not used.
//
// A path the document does not list must be answered as its
// components.responses.NotFound says, and a method a listed path does not
// serve as components.responses.MethodNotAllowed says, when the document
// has them.
//
// An error answer that carries FaultHeader may be a planned fault's: it is
// held to the operation's answer for its status or, failing that, to the
// document's components.responses.InjectedFailure, when the document has it.
// A fault can answer any status on any path, with a Retry-After of its own.
func (v *Validator) Check(req *http.Request, reqBody []byte, res *http.Response, resBody []byte) []Violation {
	v.checking.Lock()
	defer v.checking.Unlock()
	if res.StatusCode >= 400 && res.Header.Get(FaultHeader) != "" {
		if injected := v.response("InjectedFailure"); injected != nil {
			if found := v.check(req, reqBody, res, resBody); len(found) == 0 {
				return nil
			}
			var opts []config.Option
			if v.strict {
				opts = append(opts, config.WithStrictMode())
			}
			return v.checkAgainst(withBody(req, reqBody), withResponseBody(res, resBody), resBody, injected, req.URL.Path, res.StatusCode, opts...)
		}
	}
	return v.check(req, reqBody, res, resBody)
}

// FaultHeader marks the sandbox's answers that a planned fault changed; its
// value is the fault's id.
const FaultHeader = "X-Sandbox-Fault"

// check holds an answer to its operation's description, or to NotFound or
// MethodNotAllowed when no operation matches.
func (v *Validator) check(req *http.Request, reqBody []byte, res *http.Response, resBody []byte) []Violation {
	req = withBody(req, reqBody)
	res = withResponseBody(res, resBody)
	// The document's paths are all clean; one that is not (/v1/bugs/.,
	// //v1/campaigns, a trailing slash) names none of them, though the
	// path finder would take "." for an {id}.
	if p := req.URL.Path; path.Clean(p) != p {
		return v.checkUnrouted(req, res, resBody, false, nil)
	}
	pathItem, errs, template := paths.FindPath(req, v.model, nil)
	if pathItem != nil && req.Method == http.MethodHead && !hasOperation(pathItem, http.MethodHead) && pathItem.Get != nil {
		return v.checkHead(req, res, pathItem.Get, template)
	}
	if pathItem == nil || !hasOperation(pathItem, req.Method) {
		return v.checkUnrouted(req, res, resBody, pathItem != nil, errs)
	}
	var found []Violation
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		_, reqErrs := v.validator.ValidateHttpRequestSyncWithPathItem(req, pathItem, template)
		for _, violation := range violations("request", reqErrs) {
			// Unknown request fields are ignored by design, and so are
			// unknown request headers unless asked for: strictness is
			// about what the API sends.
			switch {
			case violation.In == "request undeclared-property":
			case violation.In == "request undeclared-header" && !v.requestHeaders:
			default:
				found = append(found, violation)
			}
		}
	}
	_, resErrs := v.validator.ValidateHttpResponse(withBody(req, reqBody), res)
	return append(found, violations("response", resErrs)...)
}

// CheckWebhook validates a webhook delivery received from the API: its
// headers and body against the post operation of the document's webhook
// named after the event type, such as "bug.created".
func (v *Validator) CheckWebhook(eventType string, req *http.Request, body []byte) []Violation {
	v.checking.Lock()
	defer v.checking.Unlock()
	var item *v3.PathItem
	if v.model.Webhooks != nil {
		item = v.model.Webhooks.GetOrZero(eventType)
	}
	if item == nil || item.Post == nil {
		return []Violation{{
			In: "webhook", Path: eventType, Want: "a webhook of that name with a post operation",
			Message: fmt.Sprintf("the document describes no %s webhook", eventType),
		}}
	}
	_, errs := v.validator.ValidateHttpRequestSyncWithPathItem(withBody(req, body), item, req.URL.Path)
	return violations("webhook", errs)
}

// checkHead checks the answer to HEAD on a path whose GET the document
// describes: GET's status and headers, without a body.
func (v *Validator) checkHead(req *http.Request, res *http.Response, get *v3.Operation, template string) []Violation {
	status := strconv.Itoa(res.StatusCode)
	want := get.Responses.Codes.GetOrZero(status)
	if want == nil {
		want = get.Responses.Default
	}
	if want == nil {
		return []Violation{{
			In: "response status", Path: "$", Want: "a status GET " + template + " lists",
			Message: fmt.Sprintf("HEAD was answered %d, which GET does not list", res.StatusCode),
		}}
	}
	_, errs := responses.ValidateResponseHeaders(req, res, want.Headers, template, status)
	return violations("response", errs)
}

// unroutedAnswers are the components.responses an unrouted request may get
// besides NotFound or MethodNotAllowed: the refusals that come before routing.
var unroutedAnswers = map[int]string{
	http.StatusBadRequest:            "InvalidParameter",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusRequestURITooLong:     "URITooLong",
	http.StatusRequestEntityTooLarge: "PayloadTooLarge",
	http.StatusTooManyRequests:       "TooManyRequests",
	http.StatusInternalServerError:   "InternalError",
}

// checkUnrouted checks the answer to a path or method the document lacks.
func (v *Validator) checkUnrouted(req *http.Request, res *http.Response, resBody []byte, pathKnown bool, errs []*verrors.ValidationError) []Violation {
	name, status := "NotFound", http.StatusNotFound
	if pathKnown {
		name, status = "MethodNotAllowed", http.StatusMethodNotAllowed
	}
	if res.StatusCode != status {
		if other, ok := unroutedAnswers[res.StatusCode]; ok && v.response(other) != nil {
			name, status = other, res.StatusCode
		}
	}
	want := v.response(name)
	if want == nil {
		return violations("route", errs)
	}
	if res.StatusCode != status {
		return []Violation{{
			In: "route", Path: req.Method + " " + req.URL.Path, Want: strconv.Itoa(status),
			Message: fmt.Sprintf("the document has no such operation, and the answer was %d", res.StatusCode),
		}}
	}
	return v.checkAgainst(req, res, resBody, want, req.URL.Path, status)
}

// checkAgainst checks an answer's headers and JSON body against one
// components.responses entry; config.WithStrictMode also reports the
// headers it does not declare.
func (v *Validator) checkAgainst(req *http.Request, res *http.Response, resBody []byte, want *v3.Response, template string, status int, opts ...config.Option) []Violation {
	_, headerErrs := responses.ValidateResponseHeaders(req, res, want.Headers, template, strconv.Itoa(status), opts...)
	found := violations("response", headerErrs)
	if want.Content != nil {
		if media := want.Content.GetOrZero("application/json"); media != nil && media.Schema != nil {
			_, bodyErrs := v.schemas.ValidateSchemaBytes(media.Schema.Schema(), resBody)
			found = append(found, violations("response", bodyErrs)...)
		}
	}
	return found
}

// response returns the document's components.responses entry, or nil.
func (v *Validator) response(name string) *v3.Response {
	if v.model.Components == nil || v.model.Components.Responses == nil {
		return nil
	}
	return v.model.Components.Responses.GetOrZero(name)
}

func hasOperation(item *v3.PathItem, method string) bool {
	return item.GetOperations().GetOrZero(strings.ToLower(method)) != nil
}

func withBody(req *http.Request, body []byte) *http.Request {
	clone := req.Clone(req.Context())
	clone.Body = io.NopCloser(bytes.NewReader(body))
	clone.ContentLength = int64(len(body))
	return clone
}

func withResponseBody(res *http.Response, body []byte) *http.Response {
	clone := *res
	clone.Body = io.NopCloser(bytes.NewReader(body))
	clone.ContentLength = int64(len(body))
	return &clone
}

// violations flattens the library's errors: one violation per schema
// failure, or one per error that has none.
func violations(in string, errs []*verrors.ValidationError) []Violation {
	var found []Violation
	for _, e := range errs {
		where := in
		switch e.ValidationSubType {
		case "", "schema":
		case "statusCode":
			where = in + " status"
		default:
			where = in + " " + e.ValidationSubType
		}
		if e.ValidationSubType == verrors.StrictSubTypeProperty {
			found = append(found, Violation{In: where, Path: strictPath(e), Want: e.Reason, Message: e.Message})
			continue
		}
		if len(e.SchemaValidationErrors) == 0 {
			path := e.ParameterName
			if path == "" {
				path = "$"
			}
			found = append(found, Violation{In: where, Path: path, Want: want(e), Message: e.Message})
			continue
		}
		for _, f := range e.SchemaValidationErrors {
			path := jsonPath(f.InstancePath)
			switch {
			case e.ParameterName != "":
				path = e.ParameterName
			case e.ValidationSubType == "header" && len(f.InstancePath) > 0:
				path = strings.Join(f.InstancePath, ".")
			}
			found = append(found, Violation{In: where, Path: path, Want: keyword(f), Message: f.Reason})
		}
	}
	return found
}

// strictLocation finds the location a strict-mode error gives only in its
// message, as "at '$.body.data.colour'".
var strictLocation = regexp.MustCompile(`at '\$\.body([^']*)'`)

func strictPath(e *verrors.ValidationError) string {
	if m := strictLocation.FindStringSubmatch(e.Message); m != nil {
		return "$" + m[1]
	}
	return e.ParameterName
}

func want(e *verrors.ValidationError) string {
	if e.HowToFix != "" {
		return e.HowToFix
	}
	return e.Reason
}

// keyword names the failing schema keyword and where it is in the document.
func keyword(f *verrors.SchemaValidationFailure) string {
	loc := f.KeywordLocation
	if f.OriginalJsonSchemaError != nil && loc == "" {
		loc = f.OriginalJsonSchemaError.SchemaURL
	}
	return loc
}

// jsonPath writes an instance location as a JSON path: $.data.items[0].id.
func jsonPath(segments []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range segments {
		if _, err := strconv.Atoi(s); err == nil {
			fmt.Fprintf(&b, "[%s]", s)
			continue
		}
		b.WriteString(".")
		b.WriteString(s)
	}
	return b.String()
}
