package rounds

import (
	"context"
	"errors"
	"strings"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// ErrHandingOff: this host is stopping (a deploy, a restart) and starts no
// new round; the API answers 503, and the request sent again reaches a host
// that runs it.
var ErrHandingOff = errors.New("this host is stopping and starts no new rounds: send the request again")

// errHandOff is the cause a round's context is cancelled with when its host
// stops before the round ends. Unlike a stop, it records no end: the round
// stays running, keeps its events, and is resumed by another host.
var errHandOff = errors.New("handed off: the host stopped before the round ended")

// releasedPrefix starts the host stamp of a round its host gave up on
// purpose (HandOff): no live host has such an id, so the first host that
// looks for rounds of dead hosts claims it at once, without waiting for a
// heartbeat to lapse.
const releasedPrefix = "released:"

// handedOffReason is the agentSummary reason of an attempt cut by a hand-off
// (the loop itself would say "stopped", which the round is not).
const handedOffReason = "handedOff"

func (s *Service) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// HandOff prepares this host's stop without ending anyone's conversation:
// from now on no new round starts here (ErrHandingOff); the rounds running
// get until wait ends to finish; those still running then are cancelled
// with a cause that records no end. Each keeps the events it streamed and
// the cost it ran up (added to the workflow's statistics), stays running,
// and is released: another host sharing the database, told at once
// (AnnounceReleased), claims it within milliseconds (TakeOver; its sweep
// every couple of seconds makes up for a lost word), and with the embedded
// database this host's next start does. The taker runs it again from its
// request and marks that with a `roundRestarted` event. HandOff waits until
// record ends for the cut rounds to record their hand-off (writes waiting
// for an unavailable database give up then: such a round is taken over like
// a dead host's). It returns how many rounds were handed off.
func (s *Service) HandOff(wait, record context.Context) int {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return 0
	case <-wait.Done():
	}
	s.mu.Lock()
	n := len(s.running)
	for _, cancel := range s.running {
		cancel(errHandOff)
	}
	s.mu.Unlock()
	select {
	case <-done:
	case <-record.Done():
		s.recordsDone()
		<-done
	}
	return n
}

// errTakenOver is the cause a round's context is cancelled with when
// another host claimed the round meanwhile: this host was cut off from the
// database for longer than its lease, and the round runs there now.
var errTakenOver = errors.New("taken over: another host runs this round now")

// stillMine reports whether the round stamped with this host is still
// stamped so: false once another host took it over (this one lost the
// database for longer than its lease). A failure to read says yes: the
// writes that follow wait for the database anyway.
func (s *Service) stillMine(ctx context.Context, workflowID string) bool {
	host, err := s.hosts.RoundHost(ctx, workflowID)
	return err != nil || host == s.hosts.HostID()
}

// handedOff reports whether ctx, a round's, was cancelled by HandOff.
func handedOff(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errHandOff)
}

// release stamps a handed-off round as released by this host, for another
// host (or this one, restarted) to claim at once.
func (s *Service) release(ctx context.Context, workflowID string) {
	if s.hosts == nil {
		return
	}
	me := s.hosts.HostID()
	if _, err := s.hosts.ClaimRound(ctx, workflowID, me, releasedPrefix+me); err != nil {
		s.logger.Warn("rounds: releasing a handed-off round; it is taken over once this host's heartbeat lapses", "workflow", workflowID, "err", err)
		return
	}
	// Without the word the others find it at their next sweep, seconds
	// later: in a rolling deploy the next host may stop before the round
	// could finish there.
	if err := s.hosts.AnnounceReleased(ctx); err != nil {
		s.logger.Warn("rounds: announcing a released round; another host takes it at its next sweep", "workflow", workflowID, "err", err)
	}
}

// restarted appends the `roundRestarted` event of a round run again after
// its host stopped: clients drop the message the cut attempt was streaming
// (its chunks stay in the stream; no `message` event ever ends them).
func (s *Service) restarted(ctx context.Context, p tenancy.Principal, w workflows.Workflow, from string) {
	d := workflows.RoundRestartedData{Round: w.CurrentRound, Reason: workflows.RestartHostDied, FromHost: from}
	if host, ok := strings.CutPrefix(from, releasedPrefix); ok {
		d.Reason, d.FromHost = workflows.RestartHandedOff, host
	}
	if _, err := s.wf.Append(ctx, p, w.ID, workflows.EventRoundRestarted, d); err != nil {
		s.logger.Warn("rounds: marking a restarted round", "workflow", w.ID, "err", err)
	}
}
