package api

import (
	"html/template"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// homePage is the server's status page (/status, and / when the server has
// no UI): what this is, where the API is described, and whether the server
// can do its work yet. No external assets: the page must render on a
// machine without internet and must not make a browser fetch anything.
var homePage = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agenthost</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42em;margin:2em auto;padding:0 1em}
code{background:#f3f3f3;padding:0 .2em}.ok{color:#176b20}.no{color:#a33}</style></head>
<body><header><h1>agenthost</h1></header>
<main>
<p>agenthost runs AI agents and workflows over your files, with tools that are WebAssembly plugins
in a sandbox. This server speaks an HTTP API; the workspace is at <a href="/">/</a> when the UI is served.</p>
<p>API description: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3).
Health: <a href="/healthz">/healthz</a>.</p>
<h2>State</h2>
<ul>
<li id="plugins">Plugins loaded: {{.Plugins}}{{if .Ready}} — <span class="ok">ready</span>{{else}} — <span class="no">starting: {{.NotReady}}</span>{{end}}</li>
<li id="model">{{if .Model}}Agent model: <span class="ok">{{.Model}}</span>{{else}}<span class="no">No agent model configured</span>: workflows answer 503 until one is.
Set <code>AGENTHOST_OPENAI_API_KEY</code> (or <code>AGENTHOST_OPENAI_BASE_URL</code>) and
<code>AGENTHOST_MODEL_AGENT</code>, then restart.{{end}}</li>
</ul>
<p>Requests under <code>/api/v1</code> need a token: <code>agenthost admin token</code> makes one;
send it as <code>Authorization: Bearer …</code>.</p>
</main>
</body></html>
`))

type homeState struct {
	Plugins  int
	Ready    bool
	NotReady string
	Model    string
}

func handleStatus(d Deps) fiber.Handler {
	return func(c *fiber.Ctx) error {
		s := homeState{Ready: true}
		if d.Plugins != nil {
			s.Plugins = len(d.Plugins.Plugins())
		}
		if d.Ready != nil {
			if err := d.Ready(); err != nil {
				s.Ready, s.NotReady = false, err.Error()
			}
		}
		if d.Model != nil {
			s.Model = d.Model()
		}
		var b strings.Builder
		if err := homePage.Execute(&b, s); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		return c.SendString(b.String())
	}
}
