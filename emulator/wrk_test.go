package emulator_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator"
)

// TestWrkGetDeployment measures GET /v1/deployments/{id} over loopback with wrk: the
// whole chain against a bare gin handler writing the same bytes, interleaved round by
// round so both see the same machine. It runs only with HOSTEMU_WRK=1 and wrk on the
// PATH (about 40 s); the figures go into docs/performance.md.
//
//	HOSTEMU_WRK=1 go test -run TestWrkGetDeployment -v ./emulator/
func TestWrkGetDeployment(t *testing.T) {
	if os.Getenv("HOSTEMU_WRK") == "" {
		t.Skip("set HOSTEMU_WRK=1 to run the wrk comparison")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk is not installed")
	}
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: emulator.ClockManual, ClockStart: testStart, RateLimitsOff: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	emu := httptest.NewServer(e.Handler())
	defer emu.Close()
	req, _ := http.NewRequest("GET", emu.URL+"/v1/deployments/dpl_first", nil)
	req.Header.Set("Authorization", "Bearer t-read")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET: %v %v", res, err)
	}
	body := make([]byte, 0, 4096)
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	res.Body.Close()
	bare := gin.New()
	bare.GET("/v1/deployments/:id", func(c *gin.Context) { c.Data(200, "application/json; charset=utf-8", body) })
	bareSrv := httptest.NewServer(bare)
	defer bareSrv.Close()

	rounds, _ := strconv.Atoi(os.Getenv("HOSTEMU_WRK_ROUNDS"))
	if rounds == 0 {
		rounds = 5
	}
	reqsPerSec := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	run := func(url string) float64 {
		out, err := exec.Command(wrk, "-t1", "-c16", "-d3s", "-H", "Authorization: Bearer t-read", url+"/v1/deployments/dpl_first").CombinedOutput()
		if err != nil {
			t.Fatalf("wrk: %v\n%s", err, out)
		}
		m := reqsPerSec.FindSubmatch(out)
		if m == nil {
			t.Fatalf("wrk printed no Requests/sec:\n%s", out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	var ratios, emuRPS, bareRPS []float64
	for i := 0; i < rounds; i++ {
		a, b := run(emu.URL), run(bareSrv.URL)
		emuRPS, bareRPS, ratios = append(emuRPS, a), append(bareRPS, b), append(ratios, a/b)
		t.Logf("round %d: hostemu %.0f req/s, bare gin %.0f req/s, ratio %.2f", i+1, a, b, a/b)
	}
	median := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	fmt.Printf("wrk GET /v1/deployments/{id}: hostemu %.0f req/s, bare gin %.0f req/s, ratio median %.2f (min %.2f, max %.2f)\n",
		median(emuRPS), median(bareRPS), median(ratios), slices.Min(ratios), slices.Max(ratios))
}
