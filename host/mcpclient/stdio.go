package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/procguard"
)

// stopGrace is how long a stdio server has to exit after its input closes
// before its process group is killed.
const stopGrace = 2 * time.Second

// stderrTail is how much of a stdio server's standard error is kept for
// error messages; stderrLine bounds one logged line.
const (
	stderrTail = 4 << 10
	stderrLine = 1 << 10
	// stderrLines is how many lines of one process are logged; the rest
	// are counted, so that a noisy server cannot flood the host's log.
	stderrLines = 1000
)

// stdioTransport runs a server's command as an mcp.Transport. The SDK's
// CommandTransport cannot bound a message's size and signals only the
// process it started, so this one starts the process itself: in a process
// group of its own (killed whole on close), with an empty environment but
// PATH and what the admin set (the operator allowed), in a fresh empty
// directory outside the data directory, as an unprivileged user when the
// host is root, the host hidden from it (procguard), its standard output
// read through a bound on one line.
type stdioTransport struct {
	cfg    mcpconfig.Config
	sec    mcpconfig.Secrets
	root   string      // where its directory is made
	ids    *identities // who it runs as
	limit  int
	faults *faults
	logger *slog.Logger

	proc *process // set by Connect
}

// stdioEnv is a stdio server's whole environment: PATH, then the admin's
// variables ("${WORKDIR}" expanded), secrets last.
func stdioEnv(c mcpconfig.Config, sec mcpconfig.Secrets, dir string) []string {
	env := []string{"PATH=" + mcpconfig.SafePath}
	var keys []string
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+strings.ReplaceAll(c.Env[k], "${WORKDIR}", dir))
	}
	keys = keys[:0]
	for k := range sec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+sec.Env[k])
	}
	return env
}

// lookProgram resolves a command's program: a path as given, a bare name in SafePath.
func lookProgram(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, d := range filepath.SplitList(mcpconfig.SafePath) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("program %q is not in %s (name it by its absolute path)", name, mcpconfig.SafePath)
}

// workDirPrefix begins a stdio process's directory's name; the host's pid
// follows, so that a host can tell the directories of hosts no longer
// running (sweepWorkDirs).
const workDirPrefix = "agenthost-mcp-"

// workDir makes a stdio process's directory: fresh and empty, 0700, its
// user's.
func workDir(root string, cred *syscall.Credential) (string, error) {
	dir, err := os.MkdirTemp(root, fmt.Sprintf("%s%d-", workDirPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("its directory: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.Remove(dir)
			return "", fmt.Errorf("its directory: %w", err)
		}
	}
	return dir, nil
}

// sweepWorkDirs removes the directories in root that hosts left when they
// were killed (their pid runs no longer), so that what a server wrote there
// does not stay readable for the next server of its user.
func sweepWorkDirs(root string, logger *slog.Logger) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), workDirPrefix)
		pid, err := strconv.Atoi(strings.Split(rest, "-")[0])
		if !ok || !e.IsDir() || err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // its host runs (or is another user's)
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			logger.Warn("removing a stopped host's MCP server directory", "dir", e.Name(), "err", err)
		}
	}
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	argv := t.cfg.Command
	prog, err := lookProgram(argv[0])
	if err != nil {
		return nil, err
	}
	// A server of the host's user could read the host's memory and
	// initial environment (the secret key) through /proc; without the
	// guard it does not start.
	if err := procguard.Undumpable(); err != nil {
		return nil, err
	}
	cred, release, err := t.ids.take()
	if err != nil {
		return nil, err
	}
	dir, err := workDir(t.root, cred)
	if err != nil {
		release()
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			os.RemoveAll(dir)
			release()
		}
	}()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{Path: prog, Args: append([]string{argv[0]}, argv[1:]...), Env: stdioEnv(t.cfg, t.sec, dir), Dir: dir,
		Stdin: inR, Stdout: outW, Stderr: errW,
		// Its own process group: whatever it starts dies with it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: cred}}
	err = cmd.Start()
	// The child's ends belong to the child now.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", prog, err)
	}
	started = true
	p := &process{cmd: cmd, stdin: inW, stdout: outR, dir: dir, release: release, exited: make(chan struct{}), logger: t.logger}
	p.stderrDone = make(chan struct{})
	go p.readStderr(errR)
	go p.wait()
	t.proc = p
	inner, err := (&mcp.IOTransport{Reader: newLineReader(outR, t.limit), Writer: inW, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		p.stop()
		return nil, err
	}
	return &stdioConn{Connection: inner, proc: p, faults: t.faults}, nil
}

// stdioConn records why reading failed (a line too long, garbage, the
// process gone) and stops the process when the session closes.
type stdioConn struct {
	mcp.Connection
	proc   *process
	faults *faults
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil && ctx.Err() == nil {
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
			err = errServerExited
		}
		c.faults.note(err)
	}
	return m, err
}

func (c *stdioConn) Close() error {
	err := c.Connection.Close()
	c.proc.stop()
	return err
}

// errServerExited says the server's output ended: it exited or closed it.
var errServerExited = errors.New("the server's output ended (it exited)")

// process is a running stdio server.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	dir    string // its working directory, removed when it ends
	// release gives its identity back once nothing of it runs.
	release func()
	logger  *slog.Logger

	exited     chan struct{}
	exitErr    error
	stderrDone chan struct{}

	mu   sync.Mutex
	tail []byte // the end of its standard error
	once sync.Once
}

func (p *process) wait() {
	p.exitErr = p.cmd.Wait()
	// The leader is gone: so is its group, so that nothing it started
	// keeps the output open (which would hide its death from the session),
	// and then its directory: nothing of it stays for the next process.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if err := os.RemoveAll(p.dir); err != nil {
		p.logger.Warn("removing an MCP server's directory", "dir", p.dir, "err", err)
	}
	p.release()
	close(p.exited)
}

// stop ends the server: its input closes (the spec's polite way), and its
// process group is killed if it has not exited within stopGrace.
func (p *process) stop() {
	p.once.Do(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		p.stdout.Close()
		<-p.stderrDone
	})
}

// readStderr logs the server's standard error line by line (each bounded)
// and keeps its tail for error messages; nothing of it is buffered beyond that.
func (p *process) readStderr(r *os.File) {
	defer close(p.stderrDone)
	defer r.Close()
	buf := make([]byte, 4096)
	var line []byte
	logged, dropped := 0, 0
	defer func() {
		if dropped > 0 {
			p.logger.Warn("mcp server stderr: lines not logged", "lines", dropped, "logged", logged)
		}
	}()
	flush := func() {
		if len(line) == 0 {
			return
		}
		if logged < stderrLines {
			p.logger.Info("mcp server stderr", "line", string(bytes.ToValidUTF8(line, []byte("?"))))
			logged++
		} else {
			dropped++
		}
		line = line[:0]
	}
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		p.mu.Lock()
		p.tail = append(p.tail, chunk...)
		if len(p.tail) > stderrTail {
			p.tail = append(p.tail[:0], p.tail[len(p.tail)-stderrTail:]...)
		}
		p.mu.Unlock()
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				room := stderrLine - len(line)
				line = append(line, chunk[:min(room, len(chunk))]...)
				break
			}
			room := stderrLine - len(line)
			line = append(line, chunk[:min(room, i)]...)
			flush()
			chunk = chunk[i+1:]
		}
		if err != nil {
			flush()
			return
		}
	}
}

// describe says how the process ended, with the tail of its standard
// error, for an error message; "" while it runs.
func (p *process) describe() string {
	select {
	case <-p.exited:
	case <-time.After(200 * time.Millisecond):
		// Its output ended just before it exited: give the exit a moment.
		select {
		case <-p.exited:
		default:
			return ""
		}
	}
	msg := "exited"
	if p.exitErr != nil {
		msg = p.exitErr.Error()
	}
	p.mu.Lock()
	tail := strings.TrimSpace(string(bytes.ToValidUTF8(p.tail, []byte("?"))))
	p.mu.Unlock()
	if len(tail) > 400 {
		tail = "…" + tail[len(tail)-400:]
	}
	if tail != "" {
		msg += "; stderr: " + tail
	}
	return msg
}

// lineReader frames a server's output into lines (the stdio transport's
// messages are newline-delimited and contain no newline): a line longer
// than limit is refused as soon as it is that long, so a huge answer is
// never buffered whole, and a line that is not JSON is refused at its end —
// the SDK's decoder would otherwise wait for the rest of a broken value.
type lineReader struct {
	rc    io.ReadCloser
	br    *bufio.Reader
	limit int
	line  []byte // the current line, being handed out
	err   error
}

func newLineReader(rc io.ReadCloser, limit int) *lineReader {
	return &lineReader{rc: rc, br: bufio.NewReaderSize(rc, 64<<10), limit: limit}
}

// ErrTooLarge says a message from a server exceeded the server's bound.
var ErrTooLarge = errors.New("message larger than the bound")

// ErrMalformed says a server sent a line that is not JSON.
var ErrMalformed = errors.New("a line that is not JSON")

func (l *lineReader) Read(p []byte) (int, error) {
	for len(l.line) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		l.line, l.err = l.next()
	}
	n := copy(p, l.line)
	l.line = l.line[n:]
	return n, nil
}

// next reads one line, newline included; blank lines are skipped.
func (l *lineReader) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(line)+len(chunk) > l.limit+1 {
			return nil, fmt.Errorf("%w of %d bytes", ErrTooLarge, l.limit)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if len(bytes.TrimSpace(line)) > 0 {
				return nil, fmt.Errorf("%w: %q (then the output ended)", ErrMalformed, clip(string(line), 80))
			}
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			line = line[:0]
			continue
		}
		if !json.Valid(line) {
			return nil, fmt.Errorf("%w: %q", ErrMalformed, clip(strings.TrimSpace(string(line)), 80))
		}
		return line, nil
	}
}

func (l *lineReader) Close() error { return l.rc.Close() }
