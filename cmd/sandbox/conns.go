package main

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
)

// fdReserve is how many file descriptors are left below the process's limit
// for what is not an API connection: webhook deliveries, fixtures, logs.
func fdReserve(limit int) int {
	return max(128, limit/10)
}

// defaultMaxConns is the connection cap below the file-descriptor limit
// (which Go raises to the hard limit at start-up).
func defaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 10_000
	}
	limit := int(rl.Cur)
	return max(16, limit-fdReserve(limit))
}

// connLimiter caps the open connections of a server. At the cap, a new
// connection makes room by closing, oldest first, an idle keep-alive
// connection, else one that has not yet sent a whole request, else one whose
// request waits in an injected delay or trickle; only when every connection
// is busy with a request is the new one closed instead. So neither a crowd
// of idle clients nor a tenant's planned delays can lock out a new client,
// nor /healthz.
type connLimiter struct {
	net.Listener
	max int

	mu   sync.Mutex
	open int
	// idle and fresh hold, oldest first, the connections in
	// http.StateIdle and http.StateNew, and parked those waiting in a
	// fault; where has each one's element.
	idle, fresh, parked list.List
	where               map[net.Conn]*list.Element
}

func newConnLimiter(l net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: l, max: max, where: map[net.Conn]*list.Element{}}
}

// Accept returns the next connection, having made room for it.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tracked := &trackedConn{Conn: c, limiter: l}
	l.mu.Lock()
	l.open++
	var victim net.Conn
	overCap := l.open > l.max
	if overCap {
		for _, waiting := range []*list.List{&l.idle, &l.fresh, &l.parked} {
			if oldest := waiting.Front(); oldest != nil {
				victim = oldest.Value.(net.Conn)
				l.forget(victim)
				break
			}
		}
	}
	l.mu.Unlock()
	if overCap && victim == nil {
		victim = tracked
	}
	if victim != nil {
		victim.Close()
	}
	return tracked, nil
}

// ConnState is the http.Server hook that tells the limiter which
// connections are idle.
func (l *connLimiter) ConnState(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(c)
	switch state {
	case http.StateNew:
		l.where[c] = l.fresh.PushBack(c)
	case http.StateIdle:
		l.where[c] = l.idle.PushBack(c)
	}
}

// forget drops c from the idle, fresh and parked lists; l.mu is held.
func (l *connLimiter) forget(c net.Conn) {
	e, ok := l.where[c]
	if !ok {
		return
	}
	delete(l.where, c)
	l.idle.Remove(e)
	l.fresh.Remove(e)
	l.parked.Remove(e)
}

// connKey is the context key under which ConnContext puts a request's
// connection.
type connKey struct{}

// ConnContext is the http.Server hook that lets Park find a request's
// connection.
func (l *connLimiter) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// Park marks the connection of the request whose context it gets as waiting
// in a fault, until resume is called.
func (l *connLimiter) Park(ctx context.Context) (resume func()) {
	c, ok := ctx.Value(connKey{}).(net.Conn)
	if !ok {
		return func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(c)
	l.where[c] = l.parked.PushBack(c)
	// The wait ends before the handler returns, so before the connection
	// can be idle: what resume forgets is still its place in parked.
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.forget(c)
	}
}

// Open is how many accepted connections are not yet closed.
func (l *connLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// trackedConn gives its descriptor back to the limiter's count when closed,
// by the server or by the limiter, whichever is first.
type trackedConn struct {
	net.Conn
	limiter *connLimiter
	once    sync.Once
}

// NetConn returns the connection it wraps, as crypto/tls's Conn does, so
// that a reset fault reaches the TCP connection beneath to set its linger.
func (c *trackedConn) NetConn() net.Conn {
	return c.Conn
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.limiter.mu.Lock()
		defer c.limiter.mu.Unlock()
		c.limiter.open--
		c.limiter.forget(c)
	})
	return err
}
