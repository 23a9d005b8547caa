package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Sentinel errors; a *DeniedError wraps one of the first five.
var (
	ErrHostNotAllowed   = errors.New("host not in the allow-list")
	ErrAddressBlocked   = errors.New("address refused")
	ErrMethodNotAllowed = errors.New("method not allowed")
	ErrSchemeNotAllowed = errors.New("only http and https are allowed")
	ErrTooManyRedirects = errors.New("too many redirects")
	ErrResponseTooLarge = errors.New("response too large")
)

// DeniedError is a request the policy refused before or during connection.
type DeniedError struct {
	Host   string
	Reason string
	Err    error
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("request to %q refused: %s", e.Host, e.Reason)
}

func (e *DeniedError) Unwrap() error { return e.Err }

// Request is one HTTP request.
type Request struct {
	Method  string
	URL     string
	Headers map[string]string
	Body    []byte
	// Stream, when set, is the body in place of Body: opened when the
	// request is sent (again for a 307 or 308 that keeps it, and for each
	// retry of the caller's), so a large body is read as it goes out and
	// never held.
	Stream *Stream
	// Redirect, when set, decides every redirect hop the policy allowed:
	// the hop leaves without the request's credentials unless Redirect
	// sets them in the hop's Header, and an error refuses it (Do fails,
	// naming the hop, before anything is sent there). Without it, Go's
	// rule applies: credentials follow to the same domain or a subdomain.
	Redirect func(h Hop) error
}

// Stream is a request body of a known length read when it is sent.
type Stream struct {
	Length int64
	// Open returns a reader of exactly Length bytes from the start.
	Open func() (io.Reader, error)
}

// Hop is a redirect the client is about to follow.
type Hop struct {
	// Method and URL are the next request's (a 303, or a 301 or 302 of a
	// POST, turns it into a GET without body; 307 and 308 keep both).
	Method string
	URL    *url.URL
	// From answered with the redirect; First is the request's own URL.
	From, First *url.URL
	// Header is what the hop sends, credentials removed.
	Header http.Header
}

// Response is a response with its body read (up to the policy's cap).
type Response struct {
	Status  int
	Headers http.Header
	Body    []byte
	// URL is where the response came from after redirects.
	URL string
}

// Client sends requests under one Policy. It is safe for concurrent use.
type Client struct {
	pol Policy
	hc  *http.Client
}

// NewClient builds a client whose every connection is policy-checked.
func NewClient(p Policy) *Client {
	c := &Client{pol: p}
	tr := &http.Transport{
		Proxy:                 nil, // an environment proxy would bypass address checks
		DialContext:           c.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: p.timeout,
	}
	c.hc = &http.Client{Transport: tr, CheckRedirect: c.checkRedirect}
	return c
}

// Transport is the client's connection layer alone: every connection it
// opens is address-checked (special addresses refused unless the policy
// allows the host by name), without the client's host list, method list,
// size bound or redirect rules, which a caller with its own applies itself
// (host/mcpclient's HTTP servers).
func (c *Client) Transport() http.RoundTripper { return c.hc.Transport }

// Do sends r and reads the response body.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %w", r.URL, err)
	}
	if err := c.checkURL(method, u); err != nil {
		return nil, err
	}
	if c.pol.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.pol.timeout)
		defer cancel()
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	if st := r.Stream; st != nil {
		if err := streamBody(req, st); err != nil {
			return nil, err
		}
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	hc := c.hc
	var hopErr error
	if r.Redirect != nil {
		// A copy per request: the decision is the request's own (its
		// connection's hosts), the transport is shared.
		own := *c.hc
		own.CheckRedirect = func(next *http.Request, via []*http.Request) error {
			if err := c.checkRedirect(next, via); err != nil {
				return err
			}
			// The hop loses every credential Go's client may have copied
			// (it copies them to subdomains); Redirect sets back its own.
			for _, k := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2"} {
				next.Header.Del(k)
			}
			from := via[len(via)-1].URL
			if err := r.Redirect(Hop{Method: next.Method, URL: next.URL, From: from, First: via[0].URL, Header: next.Header}); err != nil {
				hopErr = fmt.Errorf("redirect from %s to %s: %w", from.Host, next.URL.Host, err)
				return hopErr
			}
			return nil
		}
		hc = &own
	}
	resp, err := hc.Do(req)
	if err != nil {
		if hopErr != nil {
			return nil, hopErr
		}
		var denied *DeniedError
		if errors.As(err, &denied) {
			return nil, denied
		}
		return nil, fmt.Errorf("request to %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.pol.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading response from %s: %w", u.Host, err)
	}
	if int64(len(b)) > c.pol.maxBytes {
		return nil, fmt.Errorf("response from %s exceeds %d bytes: %w", resp.Request.URL.Host, c.pol.maxBytes, ErrResponseTooLarge)
	}
	return &Response{Status: resp.StatusCode, Headers: resp.Header, Body: b, URL: resp.Request.URL.String()}, nil
}

// streamBody makes st req's body: its length declared (never chunked:
// providers want Content-Length with a Content-Range), read anew by
// GetBody for a hop that keeps the body.
func streamBody(req *http.Request, st *Stream) error {
	req.ContentLength = st.Length
	req.GetBody = func() (io.ReadCloser, error) {
		if st.Length == 0 {
			return http.NoBody, nil
		}
		b, err := st.Open()
		if err != nil {
			return nil, err
		}
		return io.NopCloser(io.LimitReader(b, st.Length)), nil
	}
	b, err := req.GetBody()
	if err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	req.Body = b
	return nil
}

// checkURL applies the scheme, method and allow-list rules to one hop.
func (c *Client) checkURL(method string, u *url.URL) error {
	// Not checkURL: a client's Transport (what an MCP server's connection
	// uses) applies the dial rules only, not the allow-list or methods.
	host := u.Hostname()
	if u.Scheme != "http" && u.Scheme != "https" {
		return &DeniedError{Host: host, Reason: fmt.Sprintf("scheme %q is not allowed", u.Scheme), Err: ErrSchemeNotAllowed}
	}
	if !c.pol.methodAllowed(method) {
		return &DeniedError{Host: host, Reason: fmt.Sprintf("method %s is not allowed for this tool", method), Err: ErrMethodNotAllowed}
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	if isBlockedName(host) {
		return &DeniedError{Host: host, Reason: "cloud metadata host", Err: ErrAddressBlocked}
	}
	if !c.pol.hostAllowed(host, port) {
		return &DeniedError{Host: host, Reason: "host is not in the plugin's allow-list", Err: ErrHostNotAllowed}
	}
	return nil
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.pol.maxRedirects {
		return &DeniedError{Host: req.URL.Hostname(), Reason: fmt.Sprintf("more than %d redirects", c.pol.maxRedirects), Err: ErrTooManyRedirects}
	}
	return c.checkURL(req.Method, req.URL)
}

// blockedMessage explains a refused address, and when the operator allows the
// name on other ports, says so: the fix is a "host:port" entry.
func (c *Client) blockedMessage(host, port string, a netip.Addr, reason string) string {
	msg := fmt.Sprintf("%s resolves to %s, a %s", host, a, reason)
	if a.String() == host {
		msg = fmt.Sprintf("%s is a %s", host, reason)
	}
	if ports := c.pol.privateOK[normalizeHost(host)]; len(ports) > 0 && !ports[port] && !metadataAddrs[a.WithZone("").Unmap()] {
		msg += fmt.Sprintf(" (the operator allows %s on other ports than %s)", host, port)
	}
	return msg
}

// dial resolves the host once, refuses special addresses unless the host is
// allowed by name, and connects to exactly the address it checked.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, a := range addrs {
		if err := c.checkAddr(host, port, a); err != nil {
			lastErr = err
			continue
		}
		d := net.Dialer{Timeout: 10 * time.Second}
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// resolve returns host's addresses (host itself when it is one).
func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ips, err := c.pol.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	var addrs []netip.Addr
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip.IP); ok {
			addrs = append(addrs, a.Unmap())
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolving %s: no addresses", host)
	}
	return addrs, nil
}

// checkAddr refuses a special address of host unless the operator allows the
// host by name on that port; metadata addresses are refused always.
func (c *Client) checkAddr(host, port string, a netip.Addr) error {
	if reason := blockedReason(a); reason != "" && (!c.pol.privateAllowed(host, port) || metadataAddrs[a.WithZone("").Unmap()]) {
		return &DeniedError{Host: host, Reason: c.blockedMessage(host, port, a, reason), Err: ErrAddressBlocked}
	}
	return nil
}

// CheckDestination refuses rawURL as a request to it would be refused by
// its scheme, its name or the addresses the name resolves to now, without
// connecting: what a configuration naming a server is checked with when it
// is saved, so that an address that can never be reached is refused at
// once instead of at every later use. A name that does not resolve is not
// refused (the server may be down); a name with no allowed address is.
func (c *Client) CheckDestination(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return &DeniedError{Reason: "invalid URL: " + err.Error(), Err: ErrSchemeNotAllowed}
	}
	host := u.Hostname()
	if u.Scheme != "http" && u.Scheme != "https" {
		return &DeniedError{Host: host, Reason: fmt.Sprintf("scheme %q is not allowed", u.Scheme), Err: ErrSchemeNotAllowed}
	}
	if isBlockedName(host) {
		return &DeniedError{Host: host, Reason: "cloud metadata host", Err: ErrAddressBlocked}
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil
	}
	var first error
	for _, a := range addrs {
		err := c.checkAddr(host, port, a)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// Dial connects to addr ("host:port") under the client's address rules
// alone: the name is resolved once, loopback, private and other special
// addresses are refused unless the operator allows the host by name on
// that port (WithPrivateHostsAllowed), and exactly the checked address is
// dialled. It is for protocols other than HTTP (FTP, SFTP), whose callers
// decide which host and port they may ask for; the connection's remote
// address is the pinned one.
func (c *Client) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if host, _, err := net.SplitHostPort(addr); err == nil && isBlockedName(host) {
		return nil, &DeniedError{Host: host, Reason: "cloud metadata host", Err: ErrAddressBlocked}
	}
	return c.dial(ctx, network, addr)
}

// CheckURL applies the rules of one hop (scheme, method, cloud metadata
// names, the allow-list) to rawURL without sending anything: what a
// simulation of the network (`agenthost plugin test`) must refuse alike.
func (c *Client) CheckURL(method, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return &DeniedError{Reason: "invalid URL: " + err.Error(), Err: ErrSchemeNotAllowed}
	}
	return c.checkURL(strings.ToUpper(method), u)
}
