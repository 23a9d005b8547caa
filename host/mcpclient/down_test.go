package mcpclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/referencetest"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// TestReferenceHTTPServerGoesDown: the reference server-everything over
// streamable HTTP is killed in the middle of a call. The call in flight
// ends with an error that says the server went away; afterwards its tools
// stay listed, each unavailable with the reason and since when, and a call
// is not_reachable in a person's words (not the SDK's "rejected by
// transport"). Started again on its port, the server's tools are
// available again once the back-off allows a try.
func TestReferenceHTTPServerGoesDown(t *testing.T) {
	ref := referencetest.StartHTTP(t)
	s, sealer := remote(t, ref.URL, mcpclient.Secrets{}, mcpclient.Config{ReadOnly: []string{"echo"}, TimeoutMs: 60000})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{ref.Addr}})
	ctx := context.Background()
	list, err := src.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tools.Tool{}
	for _, tl := range list {
		byName[tl.Name] = tl
	}
	if tl, ok := byName["remote_echo"]; !ok || !tl.ReadOnly || tl.Unavailable != "" {
		t.Fatalf("remote_echo while up: %+v (tools %d)", tl, len(list))
	}
	if r := src.Call(ctx, "remote_echo", []byte(`{"message":"up"}`)); !r.OK || r.Text != "Echo: up" {
		t.Fatalf("echo while up: %+v", r)
	}

	// A long call is running when the server is killed.
	done := make(chan wasm.Result, 1)
	go func() {
		done <- src.Call(ctx, "remote_trigger-long-running-operation", []byte(`{"duration":30,"steps":30}`))
	}()
	time.Sleep(1500 * time.Millisecond)
	killed := time.Now()
	ref.Kill()
	select {
	case r := <-done:
		if r.OK || r.Error.Code != wasm.CodeNotReachable || !strings.Contains(r.Error.Message, "went away during the call") ||
			strings.Contains(r.Error.Message, "rejected by transport") {
			t.Fatalf("the call in flight: %+v", r.Error)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight did not end within 20 s of the server's death")
	}

	// Listed, unavailable, with the reason and since when.
	var down []tools.Tool
	deadline := time.Now().Add(20 * time.Second)
	for {
		if down, err = src.Tools(ctx); err != nil {
			t.Fatalf("tools while down: %v", err)
		}
		if len(down) > 0 && down[0].Unavailable != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(down) != len(list) {
		t.Fatalf("while down %d tools are listed, %d while up", len(down), len(list))
	}
	for _, tl := range down {
		if !strings.Contains(tl.Unavailable, `"remote" is not reachable since`) || !strings.Contains(tl.Unavailable, "connection refused") ||
			tl.UnavailableSince == nil || tl.UnavailableSince.Before(killed.Add(-time.Second)) || tl.UnavailableSince.After(time.Now()) {
			t.Fatalf("%s while down: %q since %v (killed at %v)", tl.Name, tl.Unavailable, tl.UnavailableSince, killed)
		}
	}
	r := src.Call(ctx, "remote_echo", []byte(`{"message":"down"}`))
	if r.OK || r.Error.Code != wasm.CodeNotReachable || !strings.Contains(r.Error.Message, "not reachable") ||
		strings.Contains(r.Error.Message, "rejected by transport") {
		t.Fatalf("a call while down: %+v", r.Error)
	}

	// Back on its port: available again after the back-off.
	ref.Restart(t)
	deadline = time.Now().Add(30 * time.Second)
	for {
		up, err := src.Tools(ctx)
		if err == nil && len(up) == len(list) && up[0].Unavailable == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not available again: %+v %v", up, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if r := src.Call(ctx, "remote_echo", []byte(`{"message":"again"}`)); !r.OK || r.Text != "Echo: again" {
		t.Fatalf("echo when back: %+v", r)
	}
}
