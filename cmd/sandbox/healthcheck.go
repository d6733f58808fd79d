package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck asks a running sandbox's /healthz and returns 0 when it answers
// 200, 1 when it does not, and 2 on bad arguments. It exists because the
// container image has no shell or curl to run a health check with.
func healthcheck(args []string, stderr io.Writer) int {
	fset := flag.NewFlagSet("sandbox healthcheck", flag.ContinueOnError)
	fset.SetOutput(stderr)
	addr := fset.String("addr", "127.0.0.1:8080", "address the sandbox listens on; 0.0.0.0 and [::] are asked on loopback")
	timeout := fset.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "sandbox healthcheck: unexpected arguments: %v\n", fset.Args())
		return 2
	}
	url, err := healthURL(*addr)
	if err != nil {
		fmt.Fprintln(stderr, "sandbox healthcheck:", err)
		return 2
	}
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(stderr, "sandbox healthcheck:", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "sandbox healthcheck: GET %s: %s\n", url, resp.Status)
		return 1
	}
	return 0
}

// healthURL turns a listen address into the URL to ask. A sandbox listening
// on every interface is reached on loopback, which is where the check runs.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-addr %q: %w", addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
