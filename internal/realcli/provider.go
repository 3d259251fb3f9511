package realcli

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Provider is the model provider the CLI is pointed at: a loopback listener
// that accepts connections, reads whatever the CLI sends and never answers.
//
// Never answering is what keeps a session open. Observed with 1.0.102: a
// provider that refuses connections, resets them or answers 503 makes the CLI
// retry five times and exit within 5-25 s (removing its locks), while a request
// that simply hangs keeps it waiting, session open and locks held, until it is
// killed.
type Provider struct {
	ln       net.Listener
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	accepted atomic.Int64
	wg       sync.WaitGroup
}

// StartProvider listens on 127.0.0.1 (never any other address) on a free port.
func StartProvider() (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake provider: %w", err)
	}
	p := &Provider{ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// URL is the base URL to put in COPILOT_PROVIDER_BASE_URL.
func (p *Provider) URL() string { return "http://" + p.ln.Addr().String() + "/v1" }

// Accepted counts the connections the CLI has made.
func (p *Provider) Accepted() int64 { return p.accepted.Load() }

func (p *Provider) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.mu.Lock()
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			io.Copy(io.Discard, c) // until the CLI or Close hangs up
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
			c.Close()
		}()
	}
}

// Close stops listening and hangs up on every connection.
func (p *Provider) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}
