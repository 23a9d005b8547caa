package rounds

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// Hosts is what several hosts sharing one database need to share rounds:
// this host's id and who else is alive (the job queue's heartbeats), and
// the rounds' hosts as the store keeps them.
type Hosts interface {
	HostID() string
	LiveHosts(ctx context.Context) (map[string]bool, error)
	SetRoundHost(ctx context.Context, workflowID, hostID string) error
	HostedRounds(ctx context.Context) ([]workflows.HostedRound, error)
	ClaimRound(ctx context.Context, workflowID, from, to string) (bool, error)
	RoundHost(ctx context.Context, workflowID string) (string, error)
	// AnnounceReleased tells the other hosts that this one released
	// rounds, so that one of them takes them over at once.
	AnnounceReleased(ctx context.Context) error
	// User is the principal's user record: a round taken over runs as its
	// owner, with the owner's rights (a tenant admin's reach every
	// workspace, member or not).
	User(ctx context.Context, p tenancy.Principal) (tenancy.User, error)
}

// owner is the principal a round taken over runs as: its workflow's user,
// an admin if the user is one.
func (s *Service) owner(ctx context.Context, w workflows.Workflow) tenancy.Principal {
	p := tenancy.Principal{TenantID: w.TenantID, UserID: w.UserID}
	if s.hosts == nil {
		return p
	}
	if u, err := s.hosts.User(ctx, p); err == nil {
		p.Admin = u.Admin
	} else {
		s.logger.Warn("rounds: reading a round's owner; acting without admin rights", "workflow", w.ID, "err", err)
	}
	return p
}

// WithHosts makes the service one of several hosts: its rounds are stamped
// with its id, and TakeOver resumes the rounds of hosts that died.
func (s *Service) WithHosts(h Hosts) *Service {
	s.hosts = h
	return s
}

// watchStop cancels the round's loop when a `stopped` event is appended to
// the workflow, by this host or any other sharing the database (events of
// other hosts arrive through the broker's poll).
func (s *Service) watchStop(ctx context.Context, p tenancy.Principal, workflowID string, cancel context.CancelFunc) {
	// A round that ended (its context with it) or a workflow deleted
	// meanwhile needs no watching: only other failures are worth a word.
	quiet := func(err error) bool { return ctx.Err() != nil || errors.Is(err, tenancy.ErrNotFound) }
	head, err := s.wf.Head(ctx, workflowID)
	if err != nil {
		if !quiet(err) {
			s.logger.Warn("rounds: following the round's stop", "workflow", workflowID, "err", err)
		}
		return
	}
	ch, err := s.wf.Subscribe(ctx, p, workflowID, head)
	if err != nil {
		if !quiet(err) {
			s.logger.Warn("rounds: following the round's stop", "workflow", workflowID, "err", err)
		}
		return
	}
	// A stop recorded before the subscription started is in the state.
	if w, err := s.wf.Get(ctx, p, workflowID); err == nil && w.Status == workflows.StatusStopped {
		cancel()
		return
	}
	for ev := range ch {
		if ev.Type == workflows.EventStopped {
			cancel()
			return
		}
	}
}

// TakeOver resumes on this host the rounds still running on hosts that
// stopped beating (killed, lost their database connection): each is
// claimed in one conditional update, so of several live hosts exactly one
// takes it, and run again from its request. Tool calls the dead host made
// in that round may run again. It returns how many rounds it took.
func (s *Service) TakeOver(ctx context.Context) (int, error) {
	if s.hosts == nil || s.agent == nil {
		return 0, nil
	}
	rounds, err := s.hosts.HostedRounds(ctx)
	if err != nil || len(rounds) == 0 {
		return 0, err
	}
	live, err := s.hosts.LiveHosts(ctx)
	if err != nil {
		return 0, err
	}
	me, n := s.hosts.HostID(), 0
	for _, r := range rounds {
		if live[r.HostID] || r.HostID == me {
			continue
		}
		ok, err := s.hosts.ClaimRound(ctx, r.Workflow.ID, r.HostID, me)
		if err != nil {
			return n, err
		}
		if !ok {
			continue // another host was faster, or the round ended
		}
		if err := s.resume(ctx, r.Workflow, r.HostID); err != nil {
			if errors.Is(err, ErrHandingOff) {
				return n, nil // this host stops too; the next one takes it
			}
			s.failEarly(ctx, s.owner(ctx, r.Workflow), r.Workflow, fmt.Errorf("taking over the round of stopped host %s: %w", r.HostID, err))
			continue
		}
		n++
	}
	return n, nil
}

// resume runs a round again from its request: the workflow's last prompt,
// with the conversation before it as history.
func (s *Service) resume(ctx context.Context, w workflows.Workflow, from string) error {
	p := s.owner(ctx, w)
	req, history, err := s.roundPrompt(ctx, p, w)
	if err != nil {
		return err
	}
	setName, extra, err := s.toolSets.WorkspaceTools(ctx, p, w.WorkspaceID)
	if err != nil {
		return err
	}
	set, _, err := s.registry.WorkspaceSet(ctx, p, w.WorkspaceID, setName, extra...)
	if err != nil {
		return err
	}
	if s.isStopping() {
		s.release(ctx, w.ID)
		return ErrHandingOff
	}
	s.log(ctx, p, w.ID, workflows.LogWarning, "Round taken over from host "+strings.TrimPrefix(from, releasedPrefix)+", which stopped; it runs again from its request", 0)
	s.restarted(ctx, p, w, from)
	s.launch(ctx, p, w, StartRequest{Prompt: req.Content, continues: w.RoundTrace, promptID: req.ID}, req.Documents, history, set, nil)
	return nil
}
