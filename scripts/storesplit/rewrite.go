//go:build ignore

// rewrite moves declarations between packages of this module and rewrites
// every reference to them, so the store's split (issue #31, item 3) can be
// re-applied to code written before it: run from the module root as
//
//	go run scripts/storesplit/rewrite.go scripts/storesplit/rules.txt [dir...]
//
// Each line of the rules file reads "OLDPKG NAME NEWPKG [NEWNAME]" (package
// paths relative to the module). A declaration of NAME still in OLDPKG's
// non-test files moves to NEWPKG (its methods with it, a file of the same name
// there), and OLDPKG.NAME becomes NEWPKG.NEWNAME everywhere below the
// directories given (default "."): qualified references in other packages,
// unqualified ones inside OLDPKG. Imports are added and pruned. It is
// idempotent: a second run changes nothing. Without type information it
// cannot see a moved constant used as a composite-literal key inside OLDPKG;
// the compiler names any such reference it leaves.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type rule struct{ oldPkg, name, newPkg, newName string }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rewrite RULES [dir...]")
		os.Exit(2)
	}
	mod, err := modulePath()
	check(err)
	rules, err := readRules(os.Args[1])
	check(err)
	dirs := os.Args[2:]
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	check(move(mod, rules))
	for _, d := range dirs {
		check(filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				switch e.Name() {
				case "node_modules", "testdata", ".git", "vendor":
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			return rewriteFile(mod, rules, p)
		}))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "rewrite:", err)
		os.Exit(1)
	}
}

func modulePath() (string, error) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return "", fmt.Errorf("run from the module root: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(l, "module ")), nil
		}
	}
	return "", fmt.Errorf("go.mod has no module line")
}

func readRules(file string) ([]rule, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rs []rule
	for i, l := range strings.Split(string(b), "\n") {
		if j := strings.Index(l, "#"); j >= 0 {
			l = l[:j]
		}
		f := strings.Fields(l)
		switch len(f) {
		case 0:
			continue
		case 3:
			f = append(f, f[1])
		case 4:
		default:
			return nil, fmt.Errorf("%s:%d: want OLDPKG NAME NEWPKG [NEWNAME]", file, i+1)
		}
		rs = append(rs, rule{f[0], f[1], f[2], f[3]})
	}
	return rs, nil
}

// byOld indexes the rules by old package and name.
func byOld(rules []rule) map[string]map[string]rule {
	m := map[string]map[string]rule{}
	for _, r := range rules {
		if m[r.oldPkg] == nil {
			m[r.oldPkg] = map[string]rule{}
		}
		m[r.oldPkg][r.name] = r
	}
	return m
}

// move cuts the declarations the rules name out of their old packages'
// non-test files and appends them, comments included, to files of the same
// name in the new packages.
func move(mod string, rules []rule) error {
	idx := byOld(rules)
	olds := make([]string, 0, len(idx))
	for o := range idx {
		olds = append(olds, o)
	}
	sort.Strings(olds)
	for _, old := range olds {
		names := idx[old]
		ents, err := os.ReadDir(old)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			if err := moveFrom(filepath.Join(old, e.Name()), names); err != nil {
				return err
			}
		}
	}
	return nil
}

func moveFrom(file string, names map[string]rule) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return err
	}
	type cut struct{ from, to int }
	var cuts []cut
	dest := map[string][]string{} // new package -> declaration texts
	var imports []string
	for _, imp := range f.Imports {
		s := imp.Path.Value
		if imp.Name != nil {
			s = imp.Name.Name + " " + s
		}
		imports = append(imports, s)
	}
	for _, d := range f.Decls {
		var declared []string
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) == 1 {
				declared = []string{recvBase(d.Recv.List[0].Type)}
			} else {
				declared = []string{d.Name.Name}
			}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					declared = append(declared, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						declared = append(declared, n.Name)
					}
				}
			}
		}
		var moved, kept []string
		newPkg := ""
		for _, n := range declared {
			if r, ok := names[n]; ok {
				moved = append(moved, n)
				if newPkg != "" && newPkg != r.newPkg {
					return fmt.Errorf("%s: one declaration of %v goes to two packages", file, declared)
				}
				newPkg = r.newPkg
			} else if n != "_" {
				kept = append(kept, n)
			}
		}
		if len(moved) == 0 {
			continue
		}
		if len(kept) > 0 {
			return fmt.Errorf("%s: declaration of %v moves only in part (add %v to the rules)", file, declared, kept)
		}
		from := fset.Position(d.Pos()).Offset
		if doc := declDoc(d); doc != nil {
			from = fset.Position(doc.Pos()).Offset
		}
		to := fset.Position(d.End()).Offset
		for to < len(src) && src[to] == '\n' {
			to++
		}
		cuts = append(cuts, cut{from, to})
		dest[newPkg] = append(dest[newPkg], string(src[from:to]))
	}
	if len(cuts) == 0 {
		return nil
	}
	var out bytes.Buffer
	last := 0
	for _, c := range cuts {
		out.Write(src[last:c.from])
		last = c.to
	}
	out.Write(src[last:])
	rest, err := parser.ParseFile(token.NewFileSet(), file, out.Bytes(), parser.ParseComments)
	if err != nil {
		return err
	}
	if onlyImports(rest) && rest.Doc == nil {
		// Nothing left: the file goes.
		if err := os.Remove(file); err != nil {
			return err
		}
	} else if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		return err
	}
	for pkg, texts := range dest {
		if err := appendDecls(filepath.Join(pkg, filepath.Base(file)), path.Base(pkg), imports, texts); err != nil {
			return err
		}
		fmt.Printf("moved %d declarations %s -> %s\n", len(texts), file, pkg)
	}
	return nil
}

func onlyImports(f *ast.File) bool {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); !ok || g.Tok != token.IMPORT {
			return false
		}
	}
	return true
}

func declDoc(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

func recvBase(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// appendDecls adds declarations to file (created with the package clause and
// the source file's imports when new); rewriteFile prunes the imports later.
func appendDecls(file, pkg string, imports, texts []string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	old, err := os.ReadFile(file)
	switch {
	case err == nil:
		// The source file's imports join the existing ones (after the
		// package clause); fixImports merges them and drops unused ones.
		f, err := parser.ParseFile(token.NewFileSet(), file, old, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		end := int(f.Name.End()) - 1
		b.Write(old[:end])
		if len(imports) > 0 {
			b.WriteString("\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n")
		}
		b.Write(old[end:])
	case os.IsNotExist(err):
		b.WriteString("package " + pkg + "\n\n")
		if len(imports) > 0 {
			b.WriteString("import (\n\t" + strings.Join(imports, "\n\t") + "\n)\n")
		}
	default:
		return err
	}
	for _, t := range texts {
		b.WriteString("\n" + t)
	}
	out, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out, 0o644)
}

// rewriteFile rewrites one file's references to moved declarations and fixes
// its imports.
func rewriteFile(mod string, rules []rule, file string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return err
	}
	idx := byOld(rules)
	dir := filepath.ToSlash(filepath.Dir(file))
	dir = strings.TrimPrefix(dir, "./")
	own := "" // the old package this file belongs to, if any
	if _, ok := idx[dir]; ok && !strings.HasSuffix(f.Name.Name, "_test") {
		own = dir
	}
	// Local names of the imports of old packages.
	local := map[string]string{} // local name -> old package (relative)
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		rel, ok := strings.CutPrefix(p, mod+"/")
		if !ok || idx[rel] == nil {
			continue
		}
		name := path.Base(rel)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = rel
	}
	// A moved declaration that referred to its new home by import: the
	// qualifier goes.
	self := ""
	if !strings.HasSuffix(f.Name.Name, "_test") {
		self = path.Base(dir) // also when an earlier pass dropped the import
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			name := importName(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if p == mod+"/"+dir {
				self = name
				break
			}
			if name == self {
				self = "" // the name is another package's
			}
		}
	}
	needed := map[string]bool{} // new packages referenced
	changed := false
	skip := map[*ast.Ident]bool{}
	elided := map[*ast.CompositeLit]ast.Expr{} // element types of literals whose type is elided
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			skip[n.Sel] = true
			x, ok := n.X.(*ast.Ident)
			if !ok || x.Obj != nil {
				return true
			}
			if self != "" && x.Name == self {
				x.Name = selfMark
				changed = true
				skip[x] = true
				return true
			}
			old, ok := local[x.Name]
			if !ok {
				return true
			}
			r, ok := idx[old][n.Sel.Name]
			if !ok {
				return true
			}
			if r.newPkg == dir {
				// Inside the new package: the name is its own.
				sel := *n.Sel
				sel.Name = r.newName
				*n = ast.SelectorExpr{X: &ast.Ident{NamePos: x.NamePos, Name: selfMark}, Sel: &sel}
			} else {
				x.Name = path.Base(r.newPkg)
				n.Sel.Name = r.newName
				needed[r.newPkg] = true
			}
			changed = true
			skip[x] = true
		case *ast.CompositeLit:
			// A key of a struct literal is a field name; of a map or
			// array literal (written or elided), a value that may be moved.
			elem := n.Type
			if elem == nil {
				elem = elided[n]
			}
			_, isMap := elem.(*ast.MapType)
			_, isArray := elem.(*ast.ArrayType)
			for _, e := range n.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if ok && !isMap && !isArray {
					if k, isIdent := kv.Key.(*ast.Ident); isIdent {
						skip[k] = true
					}
				}
				var inner ast.Expr
				switch t := elem.(type) {
				case *ast.MapType:
					inner = t.Value
				case *ast.ArrayType:
					inner = t.Elt
				}
				v := e
				if ok {
					v = kv.Value
				}
				if c, ok := v.(*ast.CompositeLit); ok && c.Type == nil && inner != nil {
					elided[c] = inner
				}
			}
		case *ast.Field:
			for _, nm := range n.Names {
				skip[nm] = true
			}
		case *ast.FuncDecl:
			skip[n.Name] = true
		case *ast.TypeSpec:
			skip[n.Name] = true
		case *ast.ValueSpec:
			for _, nm := range n.Names {
				skip[nm] = true
			}
		case *ast.LabeledStmt:
			skip[n.Label] = true
		case *ast.BranchStmt:
			if n.Label != nil {
				skip[n.Label] = true
			}
		case *ast.ImportSpec:
			if n.Name != nil {
				skip[n.Name] = true
			}
		}
		return true
	})
	if own != "" {
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || skip[id] || id.Obj != nil {
				return true
			}
			r, ok := idx[own][id.Name]
			if !ok {
				return true
			}
			if ownDeclares(f, id.Name) {
				return true
			}
			id.Name = path.Base(r.newPkg) + "." + r.newName
			needed[r.newPkg] = true
			changed = true
			return true
		})
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	out := buf.String()
	if changed {
		out = flattenOwn(out)
	}
	out2, pruned, err := fixImports(mod, file, out, needed)
	if err != nil {
		return err
	}
	if !changed && !pruned {
		return nil
	}
	if out2 == string(src) {
		return nil
	}
	fmt.Println("rewrote", file)
	return os.WriteFile(file, []byte(out2), 0o644)
}

// selfMark qualifies a name that is the file's own package's, until
// flattenOwn drops it with its dot.
const selfMark = "storesplitSelf__"

// flattenOwn turns the marked selectors "selfMark.Name" back into "Name".
func flattenOwn(s string) string { return strings.ReplaceAll(s, selfMark+".", "") }

func ownDeclares(f *ast.File, name string) bool {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == name {
				return true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name == name {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// fixImports adds the new packages referenced and drops imports no longer
// used; it reports whether it dropped any.
func fixImports(mod, file, src string, needed map[string]bool) (string, bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", file, err)
	}
	dir := strings.TrimPrefix(filepath.ToSlash(filepath.Dir(file)), "./")
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := s.X.(*ast.Ident); ok && x.Obj == nil {
				used[x.Name] = true
			}
		}
		return true
	})
	have := map[string]bool{}
	var keep []*ast.ImportSpec
	pruned := false
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		have[p] = true
		name := importName(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		// A third-party package whose path does not end in its name (a
		// ".v3", a "go-" prefix) cannot be told unused from its path: it stays.
		if name == "_" || name == "." || used[name] || !token.IsIdentifier(name) {
			keep = append(keep, imp)
			continue
		}
		// The package's own path (a moved declaration importing its new home).
		pruned = true
	}
	var add []string
	for p := range needed {
		full := mod + "/" + p
		if !have[full] && p != dir {
			add = append(add, strconv.Quote(full))
		}
	}
	decls := 0
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			decls++
		}
	}
	if !pruned && len(add) == 0 && decls < 2 {
		return src, false, nil
	}
	// Rebuild the import declarations textually: remove every import decl,
	// then insert one block after the package clause.
	var lines []string
	seen := map[string]bool{}
	for _, imp := range keep {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == mod+"/"+dir && !strings.HasSuffix(f.Name.Name, "_test") {
			continue // a moved declaration importing its new home
		}
		s := imp.Path.Value
		if imp.Name != nil {
			s = imp.Name.Name + " " + s
		}
		if !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	lines = append(lines, add...)
	sort.SliceStable(lines, func(i, j int) bool {
		return groupOf(lines[i], mod) < groupOf(lines[j], mod)
	})
	var body bytes.Buffer
	last := 0
	b := []byte(src)
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		from := fset.Position(g.Pos()).Offset
		to := fset.Position(g.End()).Offset
		body.Write(b[last:from])
		last = to
	}
	body.Write(b[last:])
	rest := body.String()
	pkgEnd := fset.Position(f.Name.End()).Offset
	var blk strings.Builder
	if len(lines) > 0 {
		blk.WriteString("\n\nimport (\n")
		prev := -1
		for _, l := range lines {
			g := groupOf(l, mod)
			if prev >= 0 && g != prev {
				blk.WriteString("\n")
			}
			prev = g
			blk.WriteString("\t" + l + "\n")
		}
		blk.WriteString(")\n")
	}
	out := rest[:pkgEnd] + blk.String() + rest[pkgEnd:]
	res, err := format.Source([]byte(out))
	if err != nil {
		return "", false, fmt.Errorf("%s: formatting after import fix: %w", file, err)
	}
	return string(res), true, nil
}

// importName is the package name of an import path: its last element, with
// a major-version suffix skipped.
func importName(p string) string {
	b := path.Base(p)
	if strings.HasPrefix(b, "v") && len(b) > 1 && strings.Trim(b[1:], "0123456789") == "" {
		b = path.Base(path.Dir(p))
	}
	return b
}

// knownStd reports whether an import path is the standard library's, whose
// package names are their last element, so unused ones can be dropped.
func knownStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

func groupOf(line, mod string) int {
	i := strings.IndexByte(line, '"')
	p := line[i+1:]
	switch {
	case strings.HasPrefix(p, mod):
		return 2
	case knownStd(strings.TrimSuffix(p, `"`)):
		return 0
	}
	return 1
}
