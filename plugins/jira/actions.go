package main

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/agenthost/agenthost/pdk"
)

// The issue actions change the site: none is read-only, so the host runs
// them with a client that may write, and each declares its side effect
// (external), so the approval policy holds it.

// createIssueRequest makes an issue in a project.
type createIssueRequest struct {
	Connection  string `json:"connection" minLength:"1" description:"the connection id"`
	Service     string `json:"service" minLength:"1" description:"the service: issues"`
	Project     string `json:"project" description:"the project key (PROJ)"`
	IssueType   string `json:"issueType,omitempty" description:"the issue type's name (default Task)"`
	Summary     string `json:"summary"`
	Description string `json:"description,omitempty" description:"text; blank lines separate paragraphs"`
}

// issueRef names an issue made or changed.
type issueRef struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	WebURL string `json:"webUrl,omitempty"`
}

// commentRequest adds a comment to an issue.
type commentRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the service: issues"`
	Issue      string `json:"issue" description:"the issue key (PROJ-12)"`
	Body       string `json:"body" description:"text; blank lines separate paragraphs"`
}

// transitionRequest moves an issue through its workflow: to names the
// transition or the status it leads to.
type transitionRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the service: issues"`
	Issue      string `json:"issue" description:"the issue key (PROJ-12)"`
	To         string `json:"to" description:"the transition's name or the status it leads to"`
}

// assignRequest assigns an issue: accountId on Cloud, the user name on
// Data Center; empty unassigns.
type assignRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the service: issues"`
	Issue      string `json:"issue" description:"the issue key (PROJ-12)"`
	AccountID  string `json:"accountId,omitempty" description:"the assignee's account id (Data Center: user name); empty unassigns"`
}

func actionClient(conn, service, key string) (*client, error) {
	if service != "issues" {
		return nil, pdk.Errorf("unsupported", "service %s has no issue actions", service)
	}
	if key != "" && !issueKey.MatchString(key) {
		return nil, pdk.Errorf("invalid_path", "%q is not an issue key (PROJ-12)", key)
	}
	return newClient(conn)
}

// richBody is a rich-text value as the site's API takes it: ADF on v3
// (which refuses a plain string), the text itself on v2.
func (c *client) richBody(text string) any {
	if c.cloud {
		return adfDoc(text)
	}
	return text
}

func init() {
	pdk.Tool("createIssue", "Creates a Jira issue (project key, issue type name, summary, description as text).", func(r createIssueRequest) (issueRef, error) {
		c, err := actionClient(r.Connection, r.Service, "")
		if err != nil {
			return issueRef{}, err
		}
		if !projectKey.MatchString(r.Project) || strings.TrimSpace(r.Summary) == "" {
			return issueRef{}, pdk.Errorf("invalid", "an issue needs a project key (PROJ) and a summary")
		}
		if r.IssueType == "" {
			r.IssueType = "Task"
		}
		fields := map[string]any{"project": map[string]string{"key": r.Project}, "issuetype": map[string]string{"name": r.IssueType},
			"summary": strings.TrimSpace(r.Summary)}
		if r.Description != "" {
			fields["description"] = c.richBody(r.Description)
		}
		body, _ := json.Marshal(map[string]any{"fields": fields})
		var out issueRef
		if _, err := c.do("POST", "/rest/api/"+c.api()+"/issue", nil, body, map[string]string{"Content-Type": "application/json"}, &out); err != nil {
			return issueRef{}, err
		}
		out.WebURL = c.browseURL(out.Key)
		return out, nil
	}, pdk.External("create"))
	pdk.Tool("addComment", "Adds a comment (text) to a Jira issue.", func(r commentRequest) (issueRef, error) {
		c, err := actionClient(r.Connection, r.Service, r.Issue)
		if err != nil {
			return issueRef{}, err
		}
		if strings.TrimSpace(r.Body) == "" {
			return issueRef{}, pdk.Errorf("invalid", "the comment is empty")
		}
		body, _ := json.Marshal(map[string]any{"body": c.richBody(r.Body)})
		var out struct {
			ID string `json:"id"`
		}
		if _, err := c.do("POST", "/rest/api/"+c.api()+"/issue/"+url.PathEscape(r.Issue)+"/comment", nil, body, map[string]string{"Content-Type": "application/json"}, &out); err != nil {
			return issueRef{}, err
		}
		return issueRef{ID: out.ID, Key: r.Issue, WebURL: c.browseURL(r.Issue)}, nil
	}, pdk.External("post"))
	pdk.Tool("transitionIssue", "Moves a Jira issue by a transition, named by itself or by the status it leads to.", func(r transitionRequest) (issueRef, error) {
		c, err := actionClient(r.Connection, r.Service, r.Issue)
		if err != nil {
			return issueRef{}, err
		}
		var ts struct {
			Transitions []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
				To   struct {
					Name string `json:"name"`
				} `json:"to"`
			} `json:"transitions"`
		}
		path := "/rest/api/" + c.api() + "/issue/" + url.PathEscape(r.Issue) + "/transitions"
		if _, err := c.do("GET", path, nil, nil, nil, &ts); err != nil {
			return issueRef{}, err
		}
		id := ""
		var names []string
		for _, t := range ts.Transitions {
			if strings.EqualFold(t.Name, r.To) || strings.EqualFold(t.To.Name, r.To) {
				id = t.ID
				break
			}
			names = append(names, t.Name+" (to "+t.To.Name+")")
		}
		if id == "" {
			return issueRef{}, pdk.Errorf("invalid", "%s has no transition %q; it has: %s", r.Issue, r.To, strings.Join(names, ", "))
		}
		body, _ := json.Marshal(map[string]any{"transition": map[string]string{"id": id}})
		if _, err := c.do("POST", path, nil, body, map[string]string{"Content-Type": "application/json"}, nil); err != nil {
			return issueRef{}, err
		}
		return issueRef{Key: r.Issue, WebURL: c.browseURL(r.Issue)}, nil
	}, pdk.External("update"))
	pdk.Tool("assignIssue", "Assigns a Jira issue to an account id (Data Center: a user name); empty unassigns.", func(r assignRequest) (issueRef, error) {
		c, err := actionClient(r.Connection, r.Service, r.Issue)
		if err != nil {
			return issueRef{}, err
		}
		who := map[string]any{"accountId": nil}
		if !c.cloud {
			who = map[string]any{"name": nil}
		}
		if r.AccountID != "" {
			for k := range who {
				who[k] = r.AccountID
			}
		}
		body, _ := json.Marshal(who)
		if _, err := c.do("PUT", "/rest/api/"+c.api()+"/issue/"+url.PathEscape(r.Issue)+"/assignee", nil, body, map[string]string{"Content-Type": "application/json"}, nil); err != nil {
			return issueRef{}, err
		}
		return issueRef{Key: r.Issue, WebURL: c.browseURL(r.Issue)}, nil
	}, pdk.External("update"))
}
