package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// Every code a package can return is in the catalogue, with its own docs page, and
// the catalogue holds no code that nothing can return.
func TestEveryCodeIsCatalogued(t *testing.T) {
	a := newTestAPI(t)
	all := map[apperr.Code]bool{}
	for _, code := range apperr.All {
		all[code] = true
		d, ok := apperr.Lookup(code)
		if !ok {
			t.Errorf("%s is not in the catalogue (it would be answered as a 500)", code)
			continue
		}
		if d.Status < 400 || d.Meaning == "" {
			t.Errorf("%s: catalogue entry %+v", code, d)
		}
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/docs/errors/"+string(code), nil))
		if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "<h1><code>"+string(code)+"</code></h1>") || strings.Contains(body, "not in hostemu's catalogue") {
			t.Errorf("docs page of %s: %d %.200s", code, rec.Code, rec.Body)
		}
	}
	for _, d := range apperr.Catalogue() {
		if !all[d.Code] {
			t.Errorf("catalogue entry %s is not in apperr.All", d.Code)
		}
	}
}

// Every *apperr.Error any package builds names its code with one of apperr's
// constants, never a string literal that could miss the catalogue.
func TestErrorsUseCodeConstants(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var code ast.Expr
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "apperr") && (sel.Sel.Name == "New" || sel.Sel.Name == "Errorf") && len(n.Args) > 0 {
					code = n.Args[0]
				}
			case *ast.KeyValueExpr:
				if isIdent(n.Key, "Code") {
					if sel, ok := n.Value.(*ast.SelectorExpr); ok && isIdent(sel.X, "apperr") {
						return true
					}
				}
			}
			if code == nil {
				return true
			}
			if sel, ok := code.(*ast.SelectorExpr); !ok || !isIdent(sel.X, "apperr") {
				t.Errorf("%s: an apperr error whose code is not an apperr constant", fset.Position(code.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
