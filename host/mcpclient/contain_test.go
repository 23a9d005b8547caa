package mcpclient_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
)

// TestStdioEnvAllowList: variables are the operator's allow list, written
// next to the command. Each variable a tenant admin might use to make an
// allowed program run something else (git's fsmonitor hook through
// GIT_CONFIG_*, an ssh command, a package index, a proxy, TLS checks off,
// another HOME) is refused when the server is added, clear or sealed, with
// an error naming it, and a stored server that sets one never starts.
func TestStdioEnvAllowList(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q", repo}, {"-C", repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "a"}} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	marker := filepath.Join(t.TempDir(), "ran")
	// What the operator allows: git in one repository, with one variable.
	allowed := []string{"env=GIT_AUTHOR_NAME " + git + " -C " + repo + " status"}
	command := []string{git, "-C", repo, "status"}
	fsmonitor := map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "touch " + marker + "; false"}
	for _, c := range []struct {
		name   string
		env    map[string]string
		secret map[string]string
		refuse string // the variable the error names
	}{
		{"git fsmonitor", fsmonitor, nil, "GIT_CONFIG_COUNT"},
		{"git fsmonitor sealed", nil, fsmonitor, "GIT_CONFIG_COUNT"},
		{"git fsmonitor beside an allowed one", map[string]string{"GIT_AUTHOR_NAME": "x", "GIT_CONFIG_KEY_0": "core.fsmonitor"}, nil, "GIT_CONFIG_KEY_0"},
		{"GIT_SSH_COMMAND", map[string]string{"GIT_SSH_COMMAND": "touch " + marker}, nil, "GIT_SSH_COMMAND"},
		{"npm_config_registry", map[string]string{"npm_config_registry": "https://evil.example/"}, nil, "npm_config_registry"},
		{"UV_INDEX_URL", map[string]string{"UV_INDEX_URL": "https://evil.example/simple"}, nil, "UV_INDEX_URL"},
		{"PYTHONUSERBASE", map[string]string{"PYTHONUSERBASE": "/tmp/evil"}, nil, "PYTHONUSERBASE"},
		{"HTTPS_PROXY", nil, map[string]string{"HTTPS_PROXY": "http://evil.example:3128"}, "HTTPS_PROXY"},
		{"NODE_TLS_REJECT_UNAUTHORIZED", map[string]string{"NODE_TLS_REJECT_UNAUTHORIZED": "0"}, nil, "NODE_TLS_REJECT_UNAUTHORIZED"},
		{"HOME", map[string]string{"HOME": "/tmp/evil"}, nil, "HOME"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := mcpclient.Admin{Store: servers{}, Sealer: nil, Commands: allowed}
			if c.secret != nil {
				sealer, err := mcpclient.NewSealer(testKey(t))
				if err != nil {
					t.Fatal(err)
				}
				a.Sealer = sealer
			}
			_, err := a.Add(context.Background(), tenancy.Principal{TenantID: "t1", Admin: true},
				mcpclient.NewServer{Name: "git", Transport: mcpconfig.Stdio, Command: command, Env: c.env, SecretEnv: c.secret})
			if !errors.Is(err, tenancy.ErrForbidden) || !errors.Is(err, mcpconfig.ErrEnvNotAllowed) || !strings.Contains(err.Error(), "variable "+c.refuse+" ") {
				t.Errorf("add: %v, want it refused naming %s", err, c.refuse)
			}
			// The same server stored by other means (before the allow
			// list, another host's operator) never runs.
			s := hostile(mcpconfig.Config{Command: command, Env: c.env})
			opts := mcpclient.Options{Commands: allowed}
			if c.secret != nil {
				opts.Sealer = a.Sealer
				if s.Secrets, err = a.Sealer.Seal(s.TenantID, s.Name, mcpconfig.Secrets{Env: c.secret}); err != nil {
					t.Fatal(err)
				}
			}
			src, _ := source(t, s, opts)
			if _, err := src.Tools(context.Background()); !errors.Is(err, mcpconfig.ErrEnvNotAllowed) || !strings.Contains(err.Error(), c.refuse) {
				t.Errorf("start: %v, want it refused naming %s", err, c.refuse)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the admin's command ran")
			}
		})
	}
	// What the operator allowed passes (git is no MCP server: it runs,
	// and the handshake fails).
	s := hostile(mcpconfig.Config{Command: command, Env: map[string]string{"GIT_AUTHOR_NAME": "x"}})
	src, _ := source(t, s, mcpclient.Options{Commands: allowed})
	if _, err := src.Tools(context.Background()); err == nil || errors.Is(err, mcpconfig.ErrEnvNotAllowed) {
		t.Errorf("an allowed variable: %v", err)
	}
}

// TestCheckCommands: the operator's entries are checked at start-up; a
// variable that loads code or PATH cannot be allowed at all.
func TestCheckCommands(t *testing.T) {
	for _, c := range []struct {
		entry, err string
	}{
		{"/usr/bin/node /srv/memory.js", ""},
		{"env=MEMORY_FILE_PATH,API_TOKEN /usr/bin/node /srv/memory.js", ""},
		{"env=A env=B node", ""},
		{"env=LD_PRELOAD /usr/bin/node", "LD_PRELOAD cannot be allowed"},
		{"env=NODE_OPTIONS /usr/bin/node", "NODE_OPTIONS cannot be allowed"},
		{"env=PATH /usr/bin/node", "PATH cannot be allowed"},
		{"env=bad-name /usr/bin/node", "not a variable name"},
		{"env=A", "names no program"},
		{"bin/server", "absolute path"},
	} {
		err := mcpconfig.CheckCommands([]string{c.entry})
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %v, want %q", c.entry, err, c.err)
		}
		if c.err != "" {
			if _, err := mcpclient.New(servers{}, mcpclient.Options{DataDir: t.TempDir(), Commands: []string{c.entry}}); err == nil {
				t.Errorf("%q: the manager took it", c.entry)
			}
		}
	}
	// A variable one entry allows does not pass for another entry's command.
	allowed := []string{"env=A /usr/bin/node /srv/a.js", "/usr/bin/node /srv/b.js"}
	if err := mcpconfig.AllowedCommand(allowed, []string{"/usr/bin/node", "/srv/a.js"}, []string{"A"}); err != nil {
		t.Error(err)
	}
	if err := mcpconfig.AllowedCommand(allowed, []string{"/usr/bin/node", "/srv/b.js"}, []string{"A"}); !errors.Is(err, mcpconfig.ErrEnvNotAllowed) {
		t.Errorf("A for b.js: %v", err)
	}
}

// TestWorkRootInsideDataDir: stdio servers' directories cannot be put in
// the data directory.
func TestWorkRootInsideDataDir(t *testing.T) {
	data := t.TempDir()
	for _, root := range []string{data, filepath.Join(data, "tmp"), data + "/./x/.."} {
		if _, err := mcpclient.New(servers{}, mcpclient.Options{DataDir: data, WorkRoot: root}); err == nil || !strings.Contains(err.Error(), "inside the data directory") {
			t.Errorf("WorkRoot %s: %v", root, err)
		}
	}
	if _, err := mcpclient.New(servers{}, mcpclient.Options{DataDir: data, WorkRoot: data + "-other"}); err != nil {
		t.Errorf("a sibling: %v", err)
	}
}

// snoopingHostEnv makes the test binary a host that starts the hostile
// server and has it snoop (TestStdioCannotReadHost); the other variables
// name the server's program and the host's data directory.
const (
	snoopingHostEnv  = "MCPCLIENT_TEST_SNOOPING_HOST"
	snoopingHostBin  = "MCPCLIENT_TEST_HOSTILE"
	snoopingHostData = "MCPCLIENT_TEST_DATA"
)

// snoopingHost is the test binary as a host: the secret key is in its
// initial environment, as in a host started with AGENTHOST_SECRET_KEY, and
// it calls the hostile server's snoop through a manager, as serve would.
// It prints its pid, then what the server saw.
func snoopingHost() int {
	bin, data := os.Getenv(snoopingHostBin), os.Getenv(snoopingHostData)
	m, err := mcpclient.New(servers{hostile(mcpconfig.Config{Command: []string{bin}})}, mcpclient.Options{DataDir: data, Commands: []string{bin}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer m.Close()
	srcs, err := m.Sources(context.Background(), alice, "ws1")
	if err != nil || len(srcs) != 1 {
		fmt.Fprintln(os.Stderr, "sources:", srcs, err)
		return 1
	}
	if _, err := srcs[0].Tools(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "tools:", err)
		return 1
	}
	args, _ := json.Marshal(map[string]any{"paths": []string{data}})
	r := srcs[0].Call(context.Background(), "hostile_snoop", args)
	if !r.OK {
		fmt.Fprintln(os.Stderr, "snoop:", r.Error)
		return 1
	}
	fmt.Printf("host pid=%d uid=%d\n%s\n", os.Getpid(), os.Getuid(), r.Text)
	return 0
}

// testBinary is a copy of this test binary that any user may run (go
// test's own is in a directory of root's).
var testBinary = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	in, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer in.Close()
	bin := filepath.Join(filepath.Dir(hostileBin), "mcpclient.test")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return bin, out.Close()
})

// TestStdioCannotReadHost: from inside a stdio server, the host's initial
// environment (which holds the secret key), its memory, its working
// directory and its data directory are out of reach. The host is this test
// binary started again with the key in its environment; it runs as root
// (the server then runs as nobody) and as an unprivileged user (the server
// runs as the same user, and the host hides itself with PR_SET_DUMPABLE).
// The server's own environment is read the same way, to show the reading
// works.
func TestStdioCannotReadHost(t *testing.T) {
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	for _, c := range []struct {
		name   string
		host   *syscall.Credential // who the host runs as; nil: the test's user
		asRoot bool                // the case needs the test to run as root
	}{
		{"root host", nil, true},
		{"unprivileged host", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := os.Geteuid() == 0
			switch {
			case c.asRoot && !root:
				t.Skip("the test does not run as root")
			case !c.asRoot && root:
				c.host = nobody // root makes the host an unprivileged user
			}
			bin, err := testBinary()
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 16)
			rand.Read(b)
			secret := "agenthost-test-secret-" + hex.EncodeToString(b)
			data := t.TempDir()
			cmd := exec.Command(bin)
			cmd.Env = []string{snoopingHostEnv + "=1", snoopingHostBin + "=" + hostileBin, snoopingHostData + "=" + data,
				"AGENTHOST_SECRET_KEY=" + secret, "PATH=" + mcpconfig.SafePath}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.host}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the host: %v\n%s", err, stderr.String())
			}
			saw := string(out)
			t.Logf("the server saw:\n%s", saw)
			host := regexp.MustCompile(`host pid=(\d+) uid=(\d+)`).FindStringSubmatch(saw)
			child := regexp.MustCompile(`uid=(\d+) gid=\d+ ppid=(\d+)`).FindStringSubmatch(saw)
			if host == nil || child == nil || child[2] != host[1] {
				t.Fatalf("the server is not the host's child: %q %q", host, child)
			}
			if strings.Contains(saw, secret) {
				t.Errorf("the server read the host's secret key")
			}
			if !strings.Contains(saw, "/proc/self/environ: read") || !strings.Contains(saw, "PATH=") {
				t.Errorf("the server could not read even its own environment: the probe proves nothing")
			}
			proc := "/proc/" + host[1]
			for _, f := range []string{proc + "/environ", proc + "/mem", proc + "/cwd"} {
				if !strings.Contains(saw, f+": denied: ") {
					t.Errorf("the server read %s", f)
				}
			}
			if root && c.host == nil {
				if child[1] == "0" {
					t.Errorf("the server of a root host runs as root")
				}
				if !strings.Contains(saw, data+": denied: ") {
					t.Errorf("the server read the data directory")
				}
			}
		})
	}
}

// TestStdioServersApart: with a uid range, each stdio process of a root
// host runs as a uid of its own, so that one tenant's server cannot read
// another's environment (its sealed variables, in the clear there) or
// memory; what a server started outside its process group is killed when
// it ends, before its uid is handed out again.
func TestStdioServersApart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("uids of their own need a root host")
	}
	sealer, err := mcpclient.NewSealer(testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	var list servers
	for _, name := range []string{"alpha", "beta"} {
		s := mcpconfig.Server{ID: "srv-" + name, TenantID: "t1", Name: name, Config: mcpconfig.Config{Transport: mcpconfig.Stdio,
			Command: []string{hostileBin}, SecretEnv: []string{"API_TOKEN"}}}
		if s.Secrets, err = sealer.Seal(s.TenantID, s.Name, mcpconfig.Secrets{Env: map[string]string{"API_TOKEN": "token-of-" + name}}); err != nil {
			t.Fatal(err)
		}
		list = append(list, s)
	}
	m, err := mcpclient.New(list, mcpclient.Options{DataDir: t.TempDir(), Sealer: sealer, Commands: []string{"env=API_TOKEN " + hostileBin},
		UIDs: mcpclient.UIDRange{First: 231000, Count: 4}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	srcs, err := m.Sources(context.Background(), alice, "ws1")
	if err != nil || len(srcs) != 2 {
		t.Fatalf("sources: %v %v", srcs, err)
	}
	alpha, beta := srcs[0], srcs[1]
	r := call(t, beta, "beta_snoop", `{}`)
	who := regexp.MustCompile(`uid=(\d+) gid=\d+ ppid=\d+ pid=(\d+)`)
	b := who.FindStringSubmatch(r.Text)
	if !r.OK || b == nil {
		t.Fatalf("beta's snoop: %+v", r)
	}
	r = call(t, alpha, "alpha_snoop", fmt.Sprintf(`{"paths":["/proc/%s/environ","/proc/%s/mem"]}`, b[2], b[2]))
	a := who.FindStringSubmatch(r.Text)
	if !r.OK || a == nil {
		t.Fatalf("alpha's snoop: %+v", r)
	}
	t.Logf("alpha saw:\n%s", r.Text)
	if a[1] == b[1] || a[1] == "0" || b[1] == "0" {
		t.Fatalf("alpha runs as %s, beta as %s", a[1], b[1])
	}
	if strings.Contains(r.Text, "token-of-beta") {
		t.Errorf("alpha read beta's sealed variable")
	}
	for _, f := range []string{"/proc/" + b[2] + "/environ", "/proc/" + b[2] + "/mem"} {
		if !strings.Contains(r.Text, f+": denied: ") {
			t.Errorf("alpha read %s", f)
		}
	}
	// What alpha starts out of its group dies with it.
	r = call(t, alpha, "alpha_escape", `{}`)
	pid, err := strconv.Atoi(r.Text)
	if !r.OK || err != nil {
		t.Fatalf("escape: %+v", r)
	}
	if !alive(pid) {
		t.Fatal("the escaped child is not running")
	}
	m.Forget("srv-alpha")
	// Forget returns once the process ended and its uid was given back,
	// which kills what still ran as it.
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("alpha's escaped child %d outlived it", pid)
	}
}

// TestParseUIDRange: -mcp-uids is FIRST-LAST, never root's.
func TestParseUIDRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want mcpclient.UIDRange
		err  string
	}{
		{"231000-231999", mcpclient.UIDRange{First: 231000, Count: 1000}, ""},
		{"5-5", mcpclient.UIDRange{First: 5, Count: 1}, ""},
		{"0-10", mcpclient.UIDRange{}, "root"},
		{"10-5", mcpclient.UIDRange{}, "FIRST-LAST"},
		{"10", mcpclient.UIDRange{}, "FIRST-LAST"},
		{"a-b", mcpclient.UIDRange{}, "FIRST-LAST"},
		{"4294967290-4294967295", mcpclient.UIDRange{}, "largest"},
	} {
		got, err := mcpclient.ParseUIDRange(c.in)
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %+v %v, want %+v %q", c.in, got, err, c.want, c.err)
		}
	}
}

// TestStaleWorkDirsSwept: a host killed before its servers' directories
// were removed leaves them; the next manager removes those of hosts that no
// longer run, and leaves those of hosts that do.
func TestStaleWorkDirsSwept(t *testing.T) {
	root := t.TempDir()
	// A pid that runs no longer: a child that has exited and been waited for.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, fmt.Sprintf("agenthost-mcp-%d-123", gone.Process.Pid))
	live := filepath.Join(root, fmt.Sprintf("agenthost-mcp-%d-456", os.Getpid()))
	other := filepath.Join(root, "agenthost-mcp-notapid")
	for _, d := range []string{stale, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mcpclient.New(servers{}, mcpclient.Options{DataDir: t.TempDir(), WorkRoot: root}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stopped host's directory stays: %v", err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}
