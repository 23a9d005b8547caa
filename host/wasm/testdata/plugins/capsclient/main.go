// Command capsclient is a test plugin with one tool per host capability
// that acts for the caller: it reads and writes files, asks the model,
// searches knowledge and fetches URLs, so that plugin test's simulations
// of those capabilities can be checked against a real guest.
package main

import (
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/files"
	"github.com/agenthost/agenthost/pdk/knowledge"
	"github.com/agenthost/agenthost/pdk/model"
)

type fileArgs struct {
	File string `json:"file" description:"file id or docItem reference"`
}

type shoutArgs struct {
	File string `json:"file" description:"file to shout"`
	Out  string `json:"out" description:"name of the file to write"`
}

type askArgs struct {
	Question string `json:"question" description:"what to ask"`
}

type searchArgs struct {
	Query string `json:"query" description:"words to find"`
}

type fetchArgs struct {
	URL    string `json:"url" description:"what to fetch"`
	Method string `json:"method,omitempty" description:"HTTP method"`
}

func init() {
	pdk.Tool("readText", "Returns a file's text.", func(a fileArgs) (string, error) {
		f, err := files.Read(a.File, 0)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s (%s, %d bytes): %s", f.Name, f.MIMEType, f.Size, f.Data), nil
	}, pdk.ReadOnly())
	pdk.Tool("shout", "Writes a file's text in capitals to a new file.", func(a shoutArgs) (string, error) {
		f, err := files.Read(a.File, 0)
		if err != nil {
			return "", err
		}
		w, err := files.Write(a.Out, "text/plain", []byte(strings.ToUpper(string(f.Data))), "shout")
		if err != nil {
			return "", err
		}
		return w.DocItem, nil
	})
	pdk.Tool("ask", "Asks the model twice and joins the answers.", func(a askArgs) (string, error) {
		var out []string
		for range 2 {
			r, err := model.Complete(model.Request{Messages: []model.Message{{Role: "user", Content: a.Question}}})
			if err != nil {
				return "", err
			}
			out = append(out, r.Content)
		}
		return strings.Join(out, " | "), nil
	}, pdk.ReadOnly())
	pdk.Tool("search", "Searches knowledge and lists the hits.", func(a searchArgs) (string, error) {
		hits, err := knowledge.Search(knowledge.SearchRequest{Query: a.Query, Limit: 3})
		if err != nil {
			return "", err
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.FileName+": "+h.Text)
		}
		return strings.Join(out, "\n"), nil
	}, pdk.ReadOnly())
	pdk.Tool("fetch", "Fetches a URL.", func(a fetchArgs) (string, error) {
		resp := pdk.HTTP(pdk.HTTPRequest{Method: a.Method, URL: a.URL})
		return fmt.Sprintf("%d %s", resp.Status, resp.Body), nil
	}, pdk.ReadOnly())
}

func main() {}
