package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// limitedServer serves h behind a connection limiter of max connections,
// over TLS when overTLS, which goes over the limiter as in cmd/sandbox: its
// hooks then see TLS connections, not the ones the limiter accepted. dial
// opens a connection to it, with a deadline that keeps a broken test short.
func limitedServer(t *testing.T, h http.Handler, max int, overTLS bool, connState func(net.Conn, http.ConnState)) (limiter *connLimiter, dial func() net.Conn) {
	srv := httptest.NewUnstartedServer(h)
	limiter = newConnLimiter(srv.Listener, max)
	srv.Listener = limiter
	srv.Config.ConnState = func(c net.Conn, state http.ConnState) {
		limiter.ConnState(c, state)
		if connState != nil {
			connState(c, state)
		}
	}
	srv.Config.ConnContext = limiter.ConnContext
	if overTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	return limiter, func() net.Conn {
		t.Helper()
		var conn net.Conn
		var err error
		if overTLS {
			conn, err = tls.Dial("tcp", addr, srv.Client().Transport.(*http.Transport).TLSClientConfig)
		} else {
			conn, err = net.Dial("tcp", addr)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		return conn
	}
}

// keepAlive opens a connection, makes one request on it and reads the
// answer, leaving the connection open.
func keepAlive(t *testing.T, dial func() net.Conn) *bufio.Reader {
	t.Helper()
	conn := dial()
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return r
}

// checkClosed holds when the connection r reads from was closed by the
// server: at its end, over TLS without a close_notify.
func checkClosed(t *testing.T, which string, r *bufio.Reader) {
	t.Helper()
	if _, err := r.ReadByte(); err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%s: read %v, want the connection closed", which, err)
	}
}

func TestIdleConnectionsMakeRoomForNewClients(t *testing.T) {
	for _, overTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "TLS"}[overTLS], func(t *testing.T) {
			idle := make(chan struct{}, 16)
			limiter, dial := limitedServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "ok")
			}), 3, overTLS, func(_ net.Conn, state http.ConnState) {
				if state == http.StateIdle {
					idle <- struct{}{}
				}
			})
			var readers []*bufio.Reader
			for range 3 {
				readers = append(readers, keepAlive(t, dial))
				<-idle
			}
			// The fourth client is served, and the oldest idle connection
			// closed to make room for it.
			keepAlive(t, dial)
			checkClosed(t, "oldest idle connection", readers[0])
			if open := limiter.Open(); open != 3 {
				t.Errorf("%d connections open, want the cap of 3", open)
			}
		})
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
	for _, overTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "TLS"}[overTLS], func(t *testing.T) {
			release := make(chan struct{})
			parked := make(chan struct{}, 16)
			var limiter *connLimiter
			limiter, dial := limitedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			}), 3, overTLS, nil)
			t.Cleanup(func() { close(release) })

			var waiting []*bufio.Reader
			for range 3 {
				conn := dial()
				fmt.Fprint(conn, "GET /delayed HTTP/1.1\r\nHost: x\r\n\r\n")
				waiting = append(waiting, bufio.NewReader(conn))
				<-parked
			}
			// Every connection is busy, but parked: the new client is
			// served, and the oldest parked connection closed to make room.
			keepAlive(t, dial)
			checkClosed(t, "oldest parked connection", waiting[0])
			for _, r := range waiting[1:] {
				if r.Buffered() != 0 {
					t.Error("a younger parked connection was answered")
				}
			}
		})
	}
}

// A server with -tls-cert hands the limiter's hooks the TLS connection, not
// the one the limiter accepted, nor the refusal of plain HTTP between them:
// the limiter must still find its own, or an idle HTTPS client would never
// make room for a new one.
func TestTheLimiterFindsItsConnectionBeneathTLS(t *testing.T) {
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	tracked := &trackedConn{Conn: server, limiter: newConnLimiter(nil, 1)}
	for _, c := range []net.Conn{tracked, tls.Server(tracked, &tls.Config{}), tls.Server(&httpsConn{Conn: tracked}, &tls.Config{})} {
		if got := trackedOf(c); got != tracked {
			t.Errorf("trackedOf(%T) = %v, want the accepted connection", c, got)
		}
	}
	if got := trackedOf(server); got != nil {
		t.Errorf("trackedOf(a connection the limiter never accepted) = %v, want nil", got)
	}
}
