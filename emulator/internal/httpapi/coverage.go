package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// coverageScope reads ?namespaces=: "" (this world) or "all" (the default world, every
// live namespace and every deleted one), which only the default world's route takes.
func (a *API) coverageScope(c *gin.Context) (all bool, err error) {
	// given twice, it was refused by the strict query check before (strictControlQuery)
	v, ok := c.GetQuery("namespaces")
	if !ok {
		return false, nil
	}
	if v != "all" {
		return false, apperr.Errorf(apperr.InvalidRequest, "query parameter namespaces=%q: the only value is \"all\"%s", v, yamlcheck.DidYouMean(v, []string{"all"}))
	}
	if c.Param("ns") != "" {
		return false, apperr.New(apperr.InvalidRequest, "namespaces=all is taken by GET /_emulator/coverage, not by a namespace's coverage")
	}
	return true, nil
}

// getCoverage answers GET /_emulator/coverage: which operations, documented answers,
// lifecycle edges and faults the world's clients exercised.
func (a *API) getCoverage(c *gin.Context) (any, error) {
	all, err := a.coverageScope(c)
	if err != nil {
		return nil, err
	}
	var ignore coverage.Ignore
	for _, list := range c.QueryArray("ignore") {
		ig, err := coverage.ParseList(list, "?ignore=")
		if err != nil {
			return nil, apperr.New(apperr.InvalidRequest, "query parameter ignore: "+err.Error())
		}
		ignore = ignore.Add(ig)
	}
	cov := a.world(c).Coverage()
	if all && a.ns != nil {
		cov = coverage.Union(cov.Model(), cov, a.ns.Coverage())
	}
	return ignore.Apply(cov.Report()), nil
}

// resetCoverage answers DELETE /_emulator/coverage: the world's counts start afresh
// (with ?namespaces=all, every namespace's, deleted ones included).
func (a *API) resetCoverage(c *gin.Context) (any, error) {
	all, err := a.coverageScope(c)
	if err != nil {
		return nil, err
	}
	if _, ok := c.GetQuery("ignore"); ok {
		return nil, apperr.New(apperr.InvalidRequest, "query parameter ignore is taken by GET /_emulator/coverage, not by DELETE: nothing is ignored when counting, only when reading")
	}
	a.world(c).Coverage().Reset()
	if all && a.ns != nil {
		a.ns.ResetCoverage()
	}
	return map[string]any{"cleared": true}, nil
}
