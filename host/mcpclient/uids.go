package mcpclient

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// UIDRange is a range of user ids, [First, First+Count), for stdio
// processes of their own (Options.UIDs).
type UIDRange struct {
	First, Count uint32
}

// ParseUIDRange reads "FIRST-LAST" (both included), e.g. "200000-265535".
func ParseUIDRange(s string) (UIDRange, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	first, err1 := strconv.ParseUint(a, 10, 32)
	last, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || last < first {
		return UIDRange{}, fmt.Errorf("uid range %q: FIRST-LAST, two user ids", s)
	}
	r := UIDRange{First: uint32(first), Count: uint32(last - first + 1)}
	return r, r.check()
}

func (r UIDRange) check() error {
	if r.Count == 0 {
		return nil
	}
	if r.First == 0 {
		return errors.New("the uid range includes root (0)")
	}
	if uint64(r.First)+uint64(r.Count) > 1<<32-1 {
		return errors.New("the uid range passes the largest uid")
	}
	return nil
}

// errNoUID says every uid of the range is taken by a running process.
var errNoUID = errors.New("every uid of the operator's range runs a stdio server")

// identities hands out who a stdio process runs as: the one user of a
// root host's (User), the host's own (nil), or a uid of a range no other
// running process has, so that stdio servers cannot read each other's
// /proc files (their sealed variables, in the clear in their environment)
// or signal each other.
type identities struct {
	shared *syscall.Credential
	r      UIDRange

	mu   sync.Mutex
	used map[uint32]bool
}

// take returns the next process's identity and the function that gives
// it back when the process has ended.
func (ids *identities) take() (*syscall.Credential, func(), error) {
	if ids.r.Count == 0 {
		return ids.shared, func() {}, nil
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	for i := range ids.r.Count {
		uid := ids.r.First + i
		// A uid a process still runs as (left by a host that was killed)
		// is not handed out until that process is gone.
		if ids.used[uid] || !reapUID(uid) {
			continue
		}
		ids.used[uid] = true
		var once sync.Once
		return &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}, func() {
			once.Do(func() {
				// What the process started outside its group (setsid)
				// would otherwise run on as the next server's user.
				if !reapUID(uid) {
					return // still running: the uid stays taken
				}
				ids.mu.Lock()
				delete(ids.used, uid)
				ids.mu.Unlock()
			})
		}, nil
	}
	return nil, nil, fmt.Errorf("%w (%d)", errNoUID, ids.r.Count)
}

// reapUID kills every process whose real, effective or saved uid is uid,
// until none is left (a few passes: one may fork while it is killed); it
// says whether none is. /proc/PID/status shows a process's uids even when
// it made itself undumpable.
func reapUID(uid uint32) bool {
	want := strconv.FormatUint(uint64(uid), 10)
	for i := range 10 {
		// Killed processes take a moment to exit.
		time.Sleep(time.Duration(i) * 10 * time.Millisecond)
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return false
		}
		found := false
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/status")
			if err != nil {
				continue // gone
			}
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) >= 4 && f[0] == "Uid:" {
					if f[1] == want || f[2] == want || f[3] == want {
						if !zombie(b) {
							found = true
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
					break
				}
			}
		}
		if !found {
			return true
		}
	}
	return false
}

// zombie says whether a /proc/PID/status is a process that has exited and
// waits for its parent: it runs nothing.
func zombie(status []byte) bool {
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "State:") {
			return strings.Contains(l, "Z (zombie)") || strings.Contains(l, "X (dead)")
		}
	}
	return false
}
