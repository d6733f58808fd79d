package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

// serveCommand is how loadbench re-executes itself as one of the servers.
const serveCommand = "serve"

// recorded is a response the baseline replays: the sandbox's own bytes.
type recorded struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// serve runs the baseline on a free loopback port and prints the port on
// stdout, then serves until killed.
func serve(args []string) error {
	fset := flag.NewFlagSet(serveCommand, flag.ContinueOnError)
	replay := fset.String("replay", "", "JSON file of responses by request line")
	if len(args) == 0 || args[0] != "baseline" {
		return fmt.Errorf("usage: %s baseline -replay FILE", serveCommand)
	}
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	raw, err := os.ReadFile(*replay)
	if err != nil {
		return err
	}
	var responses map[string]recorded
	if err := json.Unmarshal(raw, &responses); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	return http.Serve(listener, baseline(responses))
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
