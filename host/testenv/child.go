package testenv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
)

// child is a helper process the harness drives over pipes (the PostgreSQL
// supervisor script, PGlite's node server): it takes requests on stdin,
// answers one line each on stdout, and exits when stdin closes.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	// lines carries the stdout lines that keep passes; a line nobody
	// waits for is dropped when the buffer is full, so a chatty child never
	// blocks on its pipe.
	lines  chan string
	exited chan struct{} // closed when the child has exited
}

// startChild starts cmd in a process group of its own, so a Ctrl-C in the
// terminal reaches only the test binary, whose Main then stops the child in
// order. keep selects the stdout lines that are answers (nil: all).
func startChild(cmd *exec.Cmd, keep func(line string) bool) (*child, error) {
	c := &child{cmd: cmd, stderr: &syncBuffer{}, lines: make(chan string, 16), exited: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if keep != nil && !keep(sc.Text()) {
				continue
			}
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// close closes the child's stdin, on which it exits, and waits for it; when
// ctx ends first, it kills the child's process group and then kill's extra
// victims (kill may be nil), waits, and reports false.
func (c *child) close(ctx context.Context, kill func()) (exited bool) {
	_ = c.stdin.Close()
	select {
	case <-c.exited:
		return true
	case <-ctx.Done():
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	if kill != nil {
		kill()
	}
	<-c.exited
	return false
}
