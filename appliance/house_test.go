package main

// The house rules of appliance/ that a reader cannot check at a glance,
// held by a test (docs/design.md says why each holds):
//   - no function longer than 100 lines;
//   - no package exporting more than 60 names (functions, types, values,
//     and the methods of exported types), but where docs/design.md says
//     why, up to the number written here;
//   - no type with more than 40 methods (a gathering place, as webui's
//     UI was with 65), 25 in webui, but where docs/design.md says why, up
//     to the number written here;
//   - no build constraint in shipped code but an OS or an architecture:
//     test and bench switches live in tests and in bench/;
//   - the copy engine (rclone, MinIO) reached only from the composition
//     root and the copy command.

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	maxFuncLines = 100
	maxExports   = 60
	maxMethods   = 40
)

// fewerMethods are the packages held to fewer methods a type, and
// moreMethods the types docs/design.md ("Why the store is large") lets
// have more, and how many at most (issue 38 leaves the store's face to
// come).
var (
	fewerMethods = map[string]int{"webui": 25}
	moreMethods  = map[string]int{"store.Tree": 76, "store.Store": 46}
)

// moreExports are the packages docs/design.md ("Why the store is large")
// lets export more than maxExports names, and how many at most.
var moreExports = map[string]int{"store": 112}

func TestHouseRules(t *testing.T) {
	fset := token.NewFileSet()
	exports, methods := map[string]int{}, map[string]int{}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if generator(f) {
			return nil // a go:generate program, never built into the binary
		}
		checkConstraints(t, p, f)
		pkg := filepath.Dir(p)
		for _, decl := range f.Decls {
			exports[pkg] += exported(decl)
			if name := receiver(decl); name != "" {
				methods[filepath.Base(pkg)+"."+name]++
			}
			if fn, ok := decl.(*ast.FuncDecl); ok {
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
					t.Errorf("%s: %s is %d lines long, more than %d: split it", p, fn.Name.Name, n, maxFuncLines)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, n := range exports {
		limit := maxExports
		if m, ok := moreExports[filepath.Base(pkg)]; ok {
			limit = m
		}
		if n > limit {
			t.Errorf("package %s exports %d names, more than %d: docs/design.md says when that is right", pkg, n, limit)
		}
	}
	for typ, n := range methods {
		limit := maxMethods
		if m, ok := fewerMethods[strings.Split(typ, ".")[0]]; ok {
			limit = m
		}
		if m, ok := moreMethods[typ]; ok {
			limit = m
		}
		if n > limit {
			t.Errorf("type %s has %d methods, more than %d: give its groups a type each", typ, n, limit)
		}
	}
	if exports["store"] == 0 || exports["server"] == 0 || methods["store.Tree"] == 0 {
		t.Fatalf("the walk missed packages: %v", exports)
	}
}

// receiver is the name of the type decl is a method of ("" if it is not
// a method).
func receiver(decl ast.Decl) string {
	fn, ok := decl.(*ast.FuncDecl)
	if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// exported counts the names decl exports.
func exported(decl ast.Decl) int {
	n := 0
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Name.IsExported() && (d.Recv == nil || exportedType(d.Recv.List[0].Type)) {
			n++
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					n++
				}
			case *ast.ValueSpec:
				for _, name := range s.Names {
					if name.IsExported() {
						n++
					}
				}
			}
		}
	}
	return n
}

func exportedType(e ast.Expr) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.IsExported()
}

// checkConstraints refuses a build constraint that is not a GOOS or
// GOARCH: a tag that switches behaviour on in some build of the shipped
// code.
func checkConstraints(t *testing.T, p string, f *ast.File) {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			expr.Eval(func(tag string) bool {
				if !platform[tag] {
					t.Errorf("%s: build tag %q: test and bench switches do not belong in shipped code", p, tag)
				}
				return true
			})
		}
	}
}

// generator says whether f is a go:generate program (//go:build ignore).
func generator(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// platform are the tags a shipped file may be built for.
var platform = map[string]bool{"linux": true, "arm": true, "amd64": true, "arm64": true, "unix": true, "windows": true, "darwin": true}

// protocols are the packages that serve one protocol each (docs/design.md:
// "no protocol package knows another"). What two of them share is a part
// they both use (store, shares' book, preview's maker, admin's System) or
// a leaf (filetype, rights, refusal, davxml, precond), never one of them.
var protocols = []string{"files", "calendars", "sftpd", "webui", "status", "previewapi", "shareapi"}

// No protocol package imports another.
func TestNoProtocolKnowsAnother(t *testing.T) {
	for _, from := range protocols {
		names, err := filepath.Glob(filepath.Join(from, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("protocol %s: no Go files (%v): is the list out of date?", from, err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				to := strings.TrimPrefix(strings.Trim(imp.Path.Value, `"`), "github.com/bonesync/bonesync/appliance/")
				if slices.Contains(protocols, to) && to != from {
					t.Errorf("%s imports %s: protocols share through a part or a leaf, never through each other", name, to)
				}
			}
		}
	}
}

// engineModules are the copy engine's modules: rclone, and the MinIO
// client for S3 targets. They and what they pull were 199 of the binary's
// 296 third-party packages (issue 38).
var engineModules = []string{"github.com/rclone/rclone", "github.com/minio/minio-go/"}

// mayLinkEngine are the packages that may reach the engine: the engine
// and its S3 backend, the composition root (bonesync serve) and the
// command line (bonesync copy). The test fails on a package missing here
// that reaches it, and on one listed that no longer does.
var mayLinkEngine = []string{"appliance", "appliance/server", "appliance/copies/engine", "appliance/copies/s3"}

// fencedMust are packages the fence is for, which the listing must hold:
// the config, PID 1, the status page, the protocols, and the image
// builder.
var fencedMust = []string{"appliance/config", "appliance/boot", "appliance/admin", "appliance/copies",
	"appliance/files", "appliance/calendars", "appliance/webui", "appliance/sftpd", "appliance/shares",
	"appliance/preview", "appliance/notices", "appliance/ocs", "appliance/front", "appliance/auth", "image"}

// No package of the box's but the engine's own, the composition root and
// the copy command reaches the copy engine: the rest takes the copy's
// settings, targets and status from the leaf package copies. Listed for
// the board (GOOS=linux GOARCH=arm), whose binary PID 1 is.
func TestHouseFencesTheCopyEngine(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...", "../image/...")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], "github.com/bonesync/bonesync/")
		seen[pkg] = true
		reached := ""
		for _, dep := range fields[1:] {
			if slices.ContainsFunc(engineModules, func(m string) bool { return strings.HasPrefix(dep, m) }) {
				reached = dep
				break
			}
		}
		switch allowed := slices.Contains(mayLinkEngine, pkg); {
		case reached != "" && !allowed:
			t.Errorf("%s reaches the copy engine (%s): take the copy's settings, targets and status from appliance/copies; only %v link the engine", pkg, reached, mayLinkEngine)
		case reached == "" && allowed:
			t.Errorf("%s no longer reaches the copy engine: take it off mayLinkEngine", pkg)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(fencedMust, mayLinkEngine...) {
		if !seen[p] {
			t.Errorf("go list did not list %s", p)
		}
	}
}

// storeOpeners are the packages that may hold the *store.Store itself:
// the store, the composition root and the command that copies a store
// (appliance's main). Every other part declares the interface it uses.
var storeOpeners = []string{"store", "server", "."}

// TestHouseStoreFace holds the store's face: no part but its openers
// names *store.Store, and no exported name of the store takes or gives
// an *os.File (a store.File reads; what the store keeps is the store's).
func TestHouseStoreFace(t *testing.T) {
	fset := token.NewFileSet()
	holders := 0
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		pkg := filepath.Dir(p)
		ast.Inspect(f, func(n ast.Node) bool {
			star, ok := n.(*ast.StarExpr)
			if !ok || !isSelector(star.X, "store", "Store") {
				return true
			}
			holders++
			if !slices.Contains(storeOpeners, pkg) {
				t.Errorf("%s: %s names *store.Store: declare the interface it uses", fset.Position(n.Pos()), pkg)
			}
			return true
		})
		if pkg == "store" {
			checkNoOSFile(t, fset, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if holders == 0 {
		t.Fatal("the walk found no *store.Store at all")
	}
}

// checkNoOSFile refuses an exported function or method of f whose
// parameters or results name *os.File.
func checkNoOSFile(t *testing.T, fset *token.FileSet, f *ast.File) {
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || !fn.Name.IsExported() || fn.Recv != nil && !exportedType(fn.Recv.List[0].Type) {
			continue
		}
		ast.Inspect(fn.Type, func(n ast.Node) bool {
			if star, ok := n.(*ast.StarExpr); ok && isSelector(star.X, "os", "File") {
				t.Errorf("%s: store.%s passes an *os.File across the store's face: use store.File", fset.Position(n.Pos()), fn.Name.Name)
			}
			return true
		})
	}
}

// isSelector says whether e is pkg.name.
func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
