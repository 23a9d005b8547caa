package gen

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// reserved are the methods of Client written by hand (client.go, events.go).
var reserved = map[string]bool{"Do": true, "Events": true}

// operation writes the client method of o, and its Params and Request
// types.
func (g *generator) operation(b *strings.Builder, o op) error {
	name := exported(o.OperationID)
	where := strings.ToUpper(o.Method) + " " + o.Path
	if reserved[name] {
		return fmt.Errorf("operationId %q would hide the hand-written Client.%s: choose another", o.OperationID, name)
	}

	// Path parameters become arguments, in the order of the path.
	byName := map[string]*parameter{}
	var query []*parameter
	for _, p := range o.Parameters {
		switch p.In {
		case "path":
			byName[p.Name] = p
		case "query", "header":
			query = append(query, p)
		default:
			return fmt.Errorf("parameter %s in %q", p.Name, p.In)
		}
	}
	args := []string{"ctx context.Context"}
	pathExpr := ""
	rest := o.Path
	for rest != "" {
		loc := pathParam.FindStringSubmatchIndex(rest)
		if loc == nil {
			pathExpr += fmt.Sprintf("%q", rest)
			break
		}
		if loc[0] > 0 {
			pathExpr += fmt.Sprintf("%q + ", rest[:loc[0]])
		}
		pname := rest[loc[2]:loc[3]]
		if _, ok := byName[pname]; !ok {
			return fmt.Errorf("path parameter {%s} is not declared", pname)
		}
		args = append(args, local(pname)+" string")
		pathExpr += "url.PathEscape(" + local(pname) + ")"
		rest = rest[loc[1]:]
		if rest != "" {
			pathExpr += " + "
		}
	}

	// Query and header parameters go in a Params struct.
	var enc strings.Builder
	if len(query) > 0 {
		pname := name + "Params"
		sort.SliceStable(query, func(i, j int) bool { return query[i].In < query[j].In })
		var decl strings.Builder
		comment(&decl, "", pname+" are the optional parameters of "+name+"; zero values are not sent.")
		decl.WriteString("type " + pname + " struct {\n")
		enc.WriteString("\tif params != nil {\n")
		for _, in := range []string{"query", "header"} {
			for _, p := range query {
				if p.In == in {
					if in == "query" {
						enc.WriteString("\t\tr.query = url.Values{}\n")
					} else {
						enc.WriteString("\t\tr.header = http.Header{}\n")
					}
					break
				}
			}
		}
		for _, p := range query {
			field := exported(p.Name)
			t, err := g.goType(p.Schema, pname+field, false)
			if err != nil {
				return fmt.Errorf("parameter %s: %w", p.Name, err)
			}
			t = paramType(strings.TrimPrefix(t, "*"), p.In)
			text := p.Description
			if p.Required {
				text = strings.TrimSpace("Required. " + text)
			}
			if p.In == "header" {
				text = strings.TrimSpace(text + " Sent as the " + p.Name + " header.")
			}
			comment(&decl, "\t", text)
			fmt.Fprintf(&decl, "\t%s %s\n", field, t)
			set := "r.query.Set"
			if p.In == "header" {
				set = "r.header.Set"
			}
			v := "params." + field
			switch t {
			case "string":
				fmt.Fprintf(&enc, "\t\tif %s != \"\" {\n\t\t\t%s(%q, %s)\n\t\t}\n", v, set, p.Name, v)
			case "int64":
				fmt.Fprintf(&enc, "\t\tif %s != 0 {\n\t\t\t%s(%q, strconv.FormatInt(%s, 10))\n\t\t}\n", v, set, p.Name, v)
			case "float64":
				fmt.Fprintf(&enc, "\t\tif %s != 0 {\n\t\t\t%s(%q, strconv.FormatFloat(%s, 'f', -1, 64))\n\t\t}\n", v, set, p.Name, v)
			case "bool":
				fmt.Fprintf(&enc, "\t\tif %s {\n\t\t\t%s(%q, \"true\")\n\t\t}\n", v, set, p.Name)
			case "[]string":
				if p.In == "header" {
					return fmt.Errorf("list header %s", p.Name)
				}
				fmt.Fprintf(&enc, "\t\tfor _, v := range %s {\n\t\t\tr.query.Add(%q, v)\n\t\t}\n", v, p.Name)
			}
		}
		enc.WriteString("\t}\n")
		decl.WriteString("}\n")
		g.decls[pname] = decl.String()
		args = append(args, "params *"+pname)
	}

	// The request body.
	var body strings.Builder
	if rb := o.RequestBody; rb != nil && len(rb.Content) > 0 {
		ct := "application/json"
		if _, ok := rb.Content[ct]; !ok {
			var cts []string
			for k := range rb.Content {
				cts = append(cts, k)
			}
			sort.Strings(cts)
			ct = cts[0]
		}
		s := rb.Content[ct].Schema
		switch {
		case ct == "application/json":
			g.docs[name+"Request"] = "the body of " + name
			t, err := g.goType(s, name+"Request", true)
			if err != nil {
				return fmt.Errorf("request body: %w", err)
			}
			if t == "json.RawMessage" {
				t = "any"
			}
			args = append(args, "body "+t)
			body.WriteString("\tr.json = body\n")
		case ct == "multipart/form-data":
			if err := g.multipart(&body, name+"Request", s); err != nil {
				return fmt.Errorf("request body: %w", err)
			}
			args = append(args, "body "+name+"Request")
		default:
			args = append(args, "body io.Reader", "contentType string")
			if strings.Contains(ct, "*") {
				ct = "application/octet-stream" // a range is no Content-Type: the server sniffs
			}
			fmt.Fprintf(&body, "\tr.body, r.contentType = body, contentType\n\tif r.contentType == \"\" {\n\t\tr.contentType = %q\n\t}\n", ct)
		}
	}

	// The answer: a decoded JSON body, the raw response, or nothing.
	var codes []string
	for code := range o.Responses {
		if strings.HasPrefix(code, "2") {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes)
	result, raw := "", false
	for _, code := range codes {
		r := o.Responses[code]
		if len(r.Content) == 0 {
			continue
		}
		if mt, ok := r.Content["application/json"]; ok {
			g.docs[name+"Response"] = "the answer of " + name
			g.docs[singular(name+"Response")] = "one item of the answer of " + name
			t, err := g.goType(mt.Schema, name+"Response", false)
			if err != nil {
				return fmt.Errorf("response %s: %w", code, err)
			}
			result = t
		} else {
			raw = true
		}
		break
	}
	if result == "" && !raw && o.Method == "get" {
		raw = true
	}

	text := fmt.Sprintf("%s calls %s.", name, where)
	if o.Summary != "" {
		text = fmt.Sprintf("%s calls %s: %s.", name, where, strings.TrimSuffix(o.Summary, "."))
	}
	if raw {
		text += " The caller reads and closes the response's body."
	}
	comment(b, "", text)
	fmt.Fprintf(b, "func (c *Client) %s(%s) ", name, strings.Join(args, ", "))
	reqInit := fmt.Sprintf("\tr := request{method: %q, path: %s}\n", strings.ToUpper(o.Method), pathExpr)
	switch {
	case raw:
		b.WriteString("(*http.Response, error) {\n" + reqInit + enc.String() + body.String() + "\treturn c.send(ctx, r)\n}\n\n")
	case result == "":
		b.WriteString("error {\n" + reqInit + enc.String() + body.String() + "\treturn c.call(ctx, r, nil)\n}\n\n")
	case g.structs[result]:
		fmt.Fprintf(b, "(*%s, error) {\n%s%s%s\tvar out %s\n\tif err := c.call(ctx, r, &out); err != nil {\n\t\treturn nil, err\n\t}\n\treturn &out, nil\n}\n\n",
			result, reqInit, enc.String(), body.String(), result)
	default:
		fmt.Fprintf(b, "(%s, error) {\n%s%s%s\tvar out %s\n\terr := c.call(ctx, r, &out)\n\treturn out, err\n}\n\n",
			result, reqInit, enc.String(), body.String(), result)
	}
	return nil
}

// multipart declares the struct of a multipart/form-data body and writes
// the code that streams it: a binary field is an io.Reader sent as a file
// part with a name of its own, every other field a form value.
func (g *generator) multipart(b *strings.Builder, name string, s *schema) error {
	if s == nil || len(s.Properties) == 0 {
		return fmt.Errorf("multipart body without properties")
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var decl strings.Builder
	comment(&decl, "", name+" is a multipart/form-data body; it is streamed, never held in memory whole. Empty values are not sent.")
	decl.WriteString("type " + name + " struct {\n")
	var lists strings.Builder
	b.WriteString("\tr.form = []formPart{\n")
	for _, k := range keys {
		p := s.Properties[k]
		t, err := g.goType(p, name+exported(k), true)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		field := exported(k)
		text := p.Description
		if len(p.Enum) > 0 {
			var vals []string
			for _, e := range p.Enum {
				vals = append(vals, fmt.Sprintf("%q", e))
			}
			text = strings.TrimSpace(text + " One of " + strings.Join(vals, ", ") + ".")
		}
		if required[k] {
			text = strings.TrimSpace("Required. " + text)
		}
		switch t {
		case "io.Reader":
			comment(&decl, "\t", text)
			fmt.Fprintf(&decl, "\t%s io.Reader\n", field)
			comment(&decl, "\t", field+"Name is the file name sent with "+field+".")
			fmt.Fprintf(&decl, "\t%sName string\n", field)
			fmt.Fprintf(b, "\t\t{name: %q, filename: body.%sName, content: body.%s, required: %v},\n", k, field, field, required[k])
		case "[]string":
			comment(&decl, "\t", text)
			fmt.Fprintf(&decl, "\t%s []string\n", field)
			fmt.Fprintf(&lists, "\tfor _, v := range body.%s {\n\t\tr.form = append(r.form, formPart{name: %q, value: v})\n\t}\n", field, k)
		default:
			// Every other value travels as text, as the form encodes it.
			comment(&decl, "\t", text)
			fmt.Fprintf(&decl, "\t%s string\n", field)
			fmt.Fprintf(b, "\t\t{name: %q, value: body.%s, required: %v},\n", k, field, required[k])
		}
	}
	b.WriteString("\t}\n")
	b.WriteString(lists.String())
	decl.WriteString("}\n")
	g.decls[name] = decl.String()
	return nil
}

// paramType is the Go type of a query or header parameter's field: a
// scalar, a list of strings for a repeated query parameter, or text for
// anything else (sent as the caller writes it).
func paramType(t, in string) string {
	switch {
	case t == "string", t == "int64", t == "float64", t == "bool":
		return t
	case strings.HasPrefix(t, "[]") && in == "query":
		return "[]string"
	}
	return "string"
}
