package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Analyzer reports dropped errors of encoders, writes, syncs, renames and
// closes of written files.
var Analyzer = &analysis.Analyzer{
	Name:     "droppederr",
	Doc:      "reports dropped errors of encoders, file writes, syncs, renames and closes of written files",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

// mustCheck are the functions and methods whose error must be used, by
// their full names as go/types prints them.
var mustCheck = map[string]bool{
	"encoding/json.Marshal":                                     true,
	"encoding/json.MarshalIndent":                               true,
	"(*encoding/json.Encoder).Encode":                           true,
	"encoding/xml.Marshal":                                      true,
	"encoding/xml.MarshalIndent":                                true,
	"(*encoding/xml.Encoder).Encode":                            true,
	"(*encoding/xml.Encoder).EncodeElement":                     true,
	"(*encoding/xml.Encoder).Flush":                             true,
	"(*encoding/gob.Encoder).Encode":                            true,
	"encoding/pem.Encode":                                       true,
	"os.WriteFile":                                              true,
	"os.Rename":                                                 true,
	"(*os.File).Write":                                          true,
	"(*os.File).WriteString":                                    true,
	"(*os.File).WriteAt":                                        true,
	"(*os.File).ReadFrom":                                       true,
	"(*os.File).Sync":                                           true,
	"(*os.File).Truncate":                                       true,
	"(*bufio.Writer).Flush":                                     true,
	"(*compress/gzip.Writer).Close":                             true,
	"(*archive/zip.Writer).Close":                               true,
	"(*archive/tar.Writer).Close":                               true,
	"golang.org/x/sys/unix.Fsetxattr":                           true,
	"golang.org/x/sys/unix.Fsync":                               true,
	"golang.org/x/sys/unix.Rename":                              true,
	"golang.org/x/sys/unix.Renameat":                            true,
	"golang.org/x/sys/unix.Renameat2":                           true,
	"golang.org/x/sys/unix.Fdatasync":                           true,
	"github.com/bonesync/bonesync/appliance/state.WriteFile":    true,
	"github.com/bonesync/bonesync/appliance/state.WriteJSON":    true,
	"(*github.com/bonesync/bonesync/appliance/state.Dir).Write": true,
	"github.com/bonesync/bonesync/appliance/state.SyncDir":      true,
}

// writes are the *os.File methods that make a later Close's error count.
var writes = map[string]bool{"Write": true, "WriteString": true, "WriteAt": true, "ReadFrom": true, "Sync": true, "Truncate": true}

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	comments := dropComments(pass)
	ins.Preorder([]ast.Node{(*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)}, func(n ast.Node) {
		var body *ast.BlockStmt
		switch f := n.(type) {
		case *ast.FuncDecl:
			body = f.Body
		case *ast.FuncLit:
			body = f.Body
		}
		if body == nil {
			return
		}
		written := writtenFiles(pass, body)
		check := func(call *ast.CallExpr, how string) {
			name, recv := callee(pass, call)
			closesWritten := name == "(*os.File).Close" && recv != nil && written[recv]
			if !mustCheck[name] && !closesWritten {
				return
			}
			if meant(pass, comments, call.Pos()) {
				return
			}
			pass.Reportf(call.Pos(), "the error of %s is %s: handle it, or say why with // dropped: WHY", short(name), how)
		}
		ast.Inspect(body, func(m ast.Node) bool {
			switch s := m.(type) {
			case *ast.FuncLit:
				return false // checked on its own, with its own writes
			case *ast.ExprStmt:
				if call, ok := ast.Unparen(s.X).(*ast.CallExpr); ok && returnsError(pass, call) {
					check(call, "dropped")
				}
			case *ast.DeferStmt:
				if returnsError(pass, s.Call) {
					check(s.Call, "dropped by defer")
				}
			case *ast.GoStmt:
				if returnsError(pass, s.Call) {
					check(s.Call, "dropped by go")
				}
			case *ast.AssignStmt:
				if len(s.Rhs) != 1 {
					return true
				}
				call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr)
				if !ok || !returnsError(pass, call) || len(s.Lhs) == 0 {
					return true
				}
				if id, ok := s.Lhs[len(s.Lhs)-1].(*ast.Ident); ok && id.Name == "_" {
					check(call, "assigned to _")
				}
			}
			return true
		})
	})
	return nil, nil
}

// returnsError says whether call's last result is an error.
func returnsError(pass *analysis.Pass, call *ast.CallExpr) bool {
	t := pass.TypesInfo.TypeOf(call)
	if tup, ok := t.(*types.Tuple); ok {
		if tup.Len() == 0 {
			return false
		}
		t = tup.At(tup.Len() - 1).Type()
	}
	return t != nil && types.Identical(t, types.Universe.Lookup("error").Type())
}

// callee is the full name of the function call calls, and for a method
// on a variable, that variable.
func callee(pass *analysis.Pass, call *ast.CallExpr) (string, types.Object) {
	var id *ast.Ident
	var recv types.Object
	switch fn := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = fn
	case *ast.SelectorExpr:
		id = fn.Sel
		if x, ok := ast.Unparen(fn.X).(*ast.Ident); ok {
			recv = pass.TypesInfo.Uses[x]
		}
	default:
		return "", nil
	}
	f, ok := pass.TypesInfo.Uses[id].(*types.Func)
	if !ok {
		return "", nil
	}
	return f.FullName(), recv
}

// writtenFiles are the variables in body that a write or sync is called
// on.
func writtenFiles(pass *analysis.Pass, body *ast.BlockStmt) map[types.Object]bool {
	out := map[types.Object]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name, recv := callee(pass, call)
		if m, ok := strings.CutPrefix(name, "(*os.File)."); ok && writes[m] && recv != nil {
			out[recv] = true
		}
		return true
	})
	return out
}

// dropComments are the lines of each file with a "// dropped:" comment.
func dropComments(pass *analysis.Pass) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	for _, f := range pass.Files {
		name := pass.Fset.File(f.Pos()).Name()
		for _, g := range f.Comments {
			for _, c := range g.List {
				if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), "dropped:") {
					if out[name] == nil {
						out[name] = map[int]bool{}
					}
					out[name][pass.Fset.Position(c.Pos()).Line] = true
				}
			}
		}
	}
	return out
}

// meant says whether the drop at pos is explained on its line or the line
// before.
func meant(pass *analysis.Pass, comments map[string]map[int]bool, pos token.Pos) bool {
	p := pass.Fset.Position(pos)
	return comments[p.Filename][p.Line] || comments[p.Filename][p.Line-1]
}

// short is a full name without the module's path, for the message.
func short(name string) string {
	return strings.ReplaceAll(name, "github.com/bonesync/bonesync/appliance/", "")
}
