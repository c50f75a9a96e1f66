package httpapi

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// strictDecoders are the functions that decode a body strictly into their argument;
// their own bodies pass dst along and are not callers.
var strictDecoders = map[string]int{"decodeStrict": 1, "unmarshalStrictKeys": 1, "strictKeysSlow": 1}

// Every type the package decodes through decodeStrict or unmarshalStrictKeys (found in
// its source: each call's destination, &v of a variable declared with its type) is in
// strictBodies, so FuzzStrictKeysFastIsSlow holds its fast path to its slow one; a
// listed type no caller decodes any more is named too. A destination the walk cannot
// type fails it: declare the variable with its type (var req T).
func TestStrictBodiesAreEveryCallers(t *testing.T) {
	decoded, err := strictDestinations(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded) == 0 {
		t.Fatal("no call of decodeStrict found: the walk is broken")
	}
	listed := map[string]bool{}
	for _, mk := range strictBodies {
		listed[fmt.Sprintf("%T", mk())] = true
	}
	var callers []string
	for typ, where := range decoded {
		callers = append(callers, typ)
		if !listed[typ] {
			t.Errorf("%s decodes a %s strictly, which strictBodies (FuzzStrictKeysFastIsSlow) does not list", where, typ)
		}
	}
	for typ := range listed {
		if !slices.Contains(callers, typ) {
			t.Errorf("strictBodies lists %s, which nothing decodes strictly", typ)
		}
	}
}

// strictDestinations are the types ("*world.ClockChange", "*httpapi.mintRequest") the
// package in dir decodes through strictDecoders, each with one place that does. Every
// call in a file counts, a function literal's at package level too, and each &v is
// the v go/types resolves (scopes, shadowing): its declaration gives the type as
// written, so the package's imports need not be loaded. A destination it cannot type,
// or a decoder used other than called by name, is an error.
func strictDestinations(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	// the imports are empty packages: only this package's names need resolving, and a
	// type's name is read from its declaration
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			return types.NewPackage(path, pathpkg.Base(path)), nil
		}),
		Error: func(error) {}, // the missing imports' names; resolution goes on
	}
	conf.Check("httpapi", fset, files, info) //nolint:errcheck // errors expected, above
	declared := map[token.Pos]ast.Expr{}     // a variable's name → its type as written
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for _, name := range n.Names {
					declared[name.Pos()] = n.Type // nil: typed by its value, untold
				}
			case *ast.Field:
				for _, name := range n.Names {
					declared[name.Pos()] = n.Type
				}
			}
			return true
		})
	}
	out := map[string]string{}
	var problems []string
	isDecoder := func(id *ast.Ident) bool {
		fn, ok := info.Uses[id].(*types.Func)
		_, named := strictDecoders[id.Name]
		return ok && named && fn.Parent() == fn.Pkg().Scope()
	}
	for _, f := range files {
		called := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if fn, ok := n.(*ast.FuncDecl); ok && fn.Recv == nil {
				if _, own := strictDecoders[fn.Name.Name]; own {
					return false // passes dst along
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok || !isDecoder(id) {
				return true
			}
			called[id] = true
			where := fset.Position(call.Pos()).String()
			arg := strictDecoders[id.Name]
			typ := ""
			if len(call.Args) > arg {
				typ = destinationType(call.Args[arg], info, declared)
			}
			if typ == "" {
				problems = append(problems, fmt.Sprintf("%s: cannot tell the type %s decodes into: give it &v of a variable declared with its type (var v T)", where, types.ExprString(call)))
				return true
			}
			if _, seen := out[typ]; !seen {
				out[typ] = where
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if fn, ok := n.(*ast.FuncDecl); ok && fn.Recv == nil {
				if _, own := strictDecoders[fn.Name.Name]; own {
					return false
				}
			}
			if id, ok := n.(*ast.Ident); ok && isDecoder(id) && !called[id] {
				problems = append(problems, fmt.Sprintf("%s: %s used other than called by name: the walk cannot see what it decodes", fset.Position(id.Pos()), id.Name))
			}
			return true
		})
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return out, nil
}

// importerFunc is a types.Importer of a function.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// destinationType is the type of the pointer arg (&v of a variable v declared with its
// type), named as %T prints it, or "" when the walk cannot tell.
func destinationType(arg ast.Expr, info *types.Info, declared map[token.Pos]ast.Expr) string {
	u, ok := arg.(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return ""
	}
	v, ok := u.X.(*ast.Ident)
	if !ok {
		return ""
	}
	obj, ok := info.Uses[v].(*types.Var)
	if !ok {
		return ""
	}
	switch typ := declared[obj.Pos()].(type) {
	case *ast.Ident:
		return "*httpapi." + typ.Name
	case *ast.SelectorExpr:
		return "*" + types.ExprString(typ)
	}
	return ""
}

// strictDestinations sees a call wherever it is (a function literal at package level,
// a method) and types &v by the v in scope at the call, not by the last declaration of
// that name before it; a v whose type is not written, and a decoder used as a value,
// are refused. Before, the walk read FuncDecls only and took the last declaration by
// position: the function literal's type went unlisted, and shadow's was
// shadowedInner's, so FuzzStrictKeysFastIsSlow could miss a body type with the test
// passing.
func TestStrictDestinationsSeeEveryShape(t *testing.T) {
	got, err := strictDestinations(filepath.Join("testdata", "strictshapes"))
	want := map[string]bool{"*httpapi.inFuncLit": true, "*httpapi.outer": true, "*httpapi.inMethod": true, "*httpapi.param": true}
	for typ := range want {
		if _, ok := got[typ]; !ok {
			t.Errorf("%s: not found", typ)
		}
	}
	for typ, where := range got {
		if !want[typ] {
			t.Errorf("%s (%s): not decoded there", typ, where)
		}
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, refused := range []string{"shapes.go:54:", "shapes.go:60:"} {
		if !strings.Contains(msg, refused) {
			t.Errorf("the call at %s is not refused: %q", refused, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; msg != "" && n != 2 {
		t.Errorf("%d problems, want 2:\n%s", n, msg)
	}
}
