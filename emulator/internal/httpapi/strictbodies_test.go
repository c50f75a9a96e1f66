package httpapi

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
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
// package in dir decodes through strictDecoders, each with one place that does.
func strictDestinations(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	var problems []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if _, own := strictDecoders[fn.Name.Name]; own && fn.Recv == nil {
				continue
			}
			declared := declaredTypes(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				id, ok := call.Fun.(*ast.Ident)
				if !ok {
					return true
				}
				arg, ok := strictDecoders[id.Name]
				if !ok || len(call.Args) <= arg {
					return true
				}
				where := fset.Position(call.Pos()).String()
				typ := destinationType(call.Args[arg], call.Pos(), declared)
				if typ == "" {
					problems = append(problems, fmt.Sprintf("%s: cannot tell the type of %s", where, types.ExprString(call.Args[arg])))
					return true
				}
				if _, seen := out[typ]; !seen {
					out[typ] = where
				}
				return true
			})
		}
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return out, nil
}

// declaration is a variable's type as written and where it is declared.
type declaration struct {
	typ ast.Expr
	pos token.Pos
}

// declaredTypes are fn's variables declared with a type (var v T, and parameters), by
// name: the ones a call may take the address of.
func declaredTypes(fn *ast.FuncDecl) map[string][]declaration {
	out := map[string][]declaration{}
	if fn.Type.Params != nil {
		for _, field := range fn.Type.Params.List {
			for _, n := range field.Names {
				out[n.Name] = append(out[n.Name], declaration{field.Type, n.Pos()})
			}
		}
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && vs.Type != nil {
			for _, name := range vs.Names {
				out[name.Name] = append(out[name.Name], declaration{vs.Type, name.Pos()})
			}
		}
		return true
	})
	return out
}

// destinationType is the type of the pointer arg (&v of a declared variable v), named
// as %T prints it, or "" when the walk cannot tell.
func destinationType(arg ast.Expr, at token.Pos, declared map[string][]declaration) string {
	u, ok := arg.(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return ""
	}
	v, ok := u.X.(*ast.Ident)
	if !ok {
		return ""
	}
	var typ ast.Expr
	for _, d := range declared[v.Name] { // the last one before the call
		if d.pos < at {
			typ = d.typ
		}
	}
	switch typ := typ.(type) {
	case *ast.Ident:
		return "*httpapi." + typ.Name
	case *ast.SelectorExpr:
		return "*" + types.ExprString(typ)
	}
	return ""
}
