package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"

	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/ratelimit"
)

// serveCommand is how loadbench re-executes itself as one of the servers.
const serveCommand = "serve"

// recorded is a response the baseline replays: the sandbox's own bytes.
type recorded struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// serve runs "sandbox" or "baseline FILE" on a free loopback port and prints
// the port on stdout, then serves until killed.
func serve(args []string) error {
	fset := flag.NewFlagSet(serveCommand, flag.ContinueOnError)
	replay := fset.String("replay", "", "baseline: JSON file of responses by request line")
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	var handler http.Handler
	switch args[0] {
	case "sandbox":
		unlimited := ratelimit.Limits{Minute: math.MaxInt32, Hour: math.MaxInt32, Day: math.MaxInt32}
		built, err := app.New(app.Config{Limits: unlimited, ControlLimits: unlimited, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return err
		}
		handler = built.Handler
	case "baseline":
		raw, err := os.ReadFile(*replay)
		if err != nil {
			return err
		}
		var responses map[string]recorded
		if err := json.Unmarshal(raw, &responses); err != nil {
			return err
		}
		handler = baseline(responses)
	default:
		return fmt.Errorf("unknown server %q", args[0])
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	return http.Serve(listener, handler)
}

// baseline does what any handler must and nothing more: read the body, then
// write the recorded headers and bytes for the request line.
func baseline(responses map[string]recorded) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		res, ok := responses[r.Method+" "+r.URL.RequestURI()]
		if !ok {
			http.Error(w, "not recorded", http.StatusNotFound)
			return
		}
		for name, values := range res.Header {
			w.Header()[name] = values
		}
		_, _ = w.Write(res.Body)
	})
}
