package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// keepAlive opens a connection, makes one request on it and reads the
// answer, leaving the connection open.
func keepAlive(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return conn, r
}

func TestIdleConnectionsMakeRoomForNewClients(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	limiter := newConnLimiter(srv.Listener, 3)
	srv.Listener = limiter
	idle := make(chan struct{}, 16)
	srv.Config.ConnState = func(c net.Conn, state http.ConnState) {
		limiter.ConnState(c, state)
		if state == http.StateIdle {
			idle <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	var readers []*bufio.Reader
	for range 3 {
		_, r := keepAlive(t, addr)
		readers = append(readers, r)
		<-idle
	}
	// The fourth client is served, and the oldest idle connection closed
	// to make room for it.
	keepAlive(t, addr)
	if _, err := readers[0].ReadByte(); err != io.EOF {
		t.Errorf("oldest idle connection: read %v, want EOF", err)
	}
	if open := limiter.Open(); open != 3 {
		t.Errorf("%d connections open, want the cap of 3", open)
	}
}

func TestDefaultMaxConnsStaysBelowTheDescriptorLimit(t *testing.T) {
	for limit, want := range map[int]int{1024: 896, 20_000: 18_000, 100_000: 90_000} {
		if got := limit - fdReserve(limit); got != want {
			t.Errorf("limit %d: cap %d, want %d", limit, got, want)
		}
	}
}

func TestConnectionsParkedInFaultsMakeRoomForNewClients(t *testing.T) {
	release := make(chan struct{})
	parked := make(chan struct{}, 16)
	var limiter *connLimiter
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/delayed" {
			resume := limiter.Park(r.Context())
			defer resume()
			parked <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		_, _ = io.WriteString(w, "ok")
	}))
	limiter = newConnLimiter(srv.Listener, 3)
	srv.Listener = limiter
	srv.Config.ConnState = limiter.ConnState
	srv.Config.ConnContext = limiter.ConnContext
	srv.Start()
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	addr := srv.Listener.Addr().String()

	var waiting []*bufio.Reader
	for range 3 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(conn, "GET /delayed HTTP/1.1\r\nHost: x\r\n\r\n")
		waiting = append(waiting, bufio.NewReader(conn))
		<-parked
	}
	// Every connection is busy, but parked: the new client is served, and
	// the oldest parked connection closed to make room for it.
	keepAlive(t, addr)
	if _, err := waiting[0].ReadByte(); err != io.EOF {
		t.Errorf("oldest parked connection: read %v, want EOF", err)
	}
	for _, r := range waiting[1:] {
		if r.Buffered() != 0 {
			t.Error("a younger parked connection was answered")
		}
	}
}

// A server with -tls-cert hands the limiter's hooks the TLS connection, not
// the one the limiter accepted: the limiter must still find its own, or an
// idle HTTPS client would never make room for a new one.
func TestTheLimiterFindsItsConnectionBeneathTLS(t *testing.T) {
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	tracked := &trackedConn{Conn: server, limiter: newConnLimiter(nil, 1)}
	for _, c := range []net.Conn{tracked, tls.Server(tracked, &tls.Config{})} {
		if got := trackedOf(c); got != tracked {
			t.Errorf("trackedOf(%T) = %v, want the accepted connection", c, got)
		}
	}
	if got := trackedOf(server); got != nil {
		t.Errorf("trackedOf(a connection the limiter never accepted) = %v, want nil", got)
	}
}
