package audit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	ctx := WithRequest(WithActor(context.Background(), Actor{Kind: ActorUser, ID: "u1", Via: ViaSession}),
		Request{IP: "198.51.100.4", UserAgent: strings.Repeat("ü", 600)})
	e, err := Normalize(ctx, Entry{TenantID: "t", Action: TokenRevoked, TargetID: strings.Repeat("x", 2000)})
	if err != nil {
		t.Fatal(err)
	}
	if e.Actor.ID != "u1" || e.IP != "198.51.100.4" || len(e.UserAgent) > MaxField || !utf8.ValidString(e.UserAgent) ||
		len(e.TargetID) > MaxField || string(e.Detail) != "{}" {
		t.Fatalf("normalized %+v", e)
	}
	// An explicit actor wins over the context's; no context: the system.
	e, _ = Normalize(ctx, Entry{TenantID: "t", Action: SCIMUserCreated, Actor: Actor{Kind: ActorSCIM, ID: "s"}})
	if e.Actor.Kind != ActorSCIM {
		t.Fatalf("actor %+v", e.Actor)
	}
	e, _ = Normalize(context.Background(), Entry{TenantID: "t", Action: TokenCreated})
	if e.Actor.Kind != ActorSystem || e.IP != "" {
		t.Fatalf("a background entry %+v", e)
	}
	big := Detail(map[string]string{"x": strings.Repeat("a", MaxDetail)})
	e, err = Normalize(ctx, Entry{TenantID: "t", Action: TokenCreated, Detail: big})
	if err != nil || len(e.Detail) > 100 || !strings.Contains(string(e.Detail), `"truncated":true`) {
		t.Fatalf("a large detail: %s %v", e.Detail, err)
	}
	for _, bad := range []Entry{
		{Action: TokenCreated},
		{TenantID: "t", Action: "token"},
		{TenantID: "t", Action: "Token.Created"},
		{TenantID: "t", Action: "token.created; DROP"},
		{TenantID: "t", Action: TokenCreated, Detail: json.RawMessage(`"s"`)},
		{TenantID: "t", Action: TokenCreated, Detail: json.RawMessage(`null`)},
		{TenantID: "t", Action: TokenCreated, Detail: json.RawMessage(`{`)},
		{TenantID: "t", Action: TokenCreated, Actor: Actor{Kind: "admin"}},
	} {
		if _, err := Normalize(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
	for _, a := range Actions() {
		if !actionName.MatchString(a) {
			t.Errorf("action %q is not a dotted name", a)
		}
	}
}

func TestSummarize(t *testing.T) {
	args := json.RawMessage(`{"to":"a@example.com","subject":"Hi","body":"` + strings.Repeat("b", 500) + `",
		"apiKey":"sk-123","Authorization":"Bearer x","attachments":[1,2,3],"options":{"a":1},"count":2,"draft":false}`)
	s := Summarize(args)
	b, _ := json.Marshal(s)
	for _, leak := range []string{"sk-123", "Bearer x"} {
		if strings.Contains(string(b), leak) {
			t.Fatalf("the summary %s shows a secret", b)
		}
	}
	if s["to"] != "a@example.com" || s["apiKey"] != "[redacted]" || s["attachments"] != "[3 items]" || s["count"] != 2.0 ||
		s["draft"] != false || s["body"] != "(502 bytes)" || !strings.HasPrefix(s["options"].(string), "{") {
		t.Fatalf("summary %s", b)
	}
	if got := Summarize(json.RawMessage(`[1,2]`)); got["bytes"] != 5 {
		t.Fatalf("a non-object's summary %v", got)
	}
	many := map[string]int{}
	for i := range 100 {
		many[strings.Repeat("k", i+1)] = i
	}
	if got := Summarize(Detail(many)); len(got) > 33 {
		t.Fatalf("the summary of 100 keys has %d", len(got))
	}
}
