package cli

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// EndWithGoRun has the kernel send this process SIGTERM when its parent dies, if that
// parent is the go command: `go run ./cmd/hostemu` and `go run …/hostemu@latest
// mutate` run hostemu as go's child, and go does not pass SIGTERM on nor take its
// child along when it dies (a `kill $PID` of the go run a script started, `timeout`,
// a CI step cancelled): hostemu would go on holding its ports, or mutate its runs.
// SIGTERM then stops hostemu as it always does (in-flight requests finished, --state
// saved; mutate kills its runs' process groups). Only under go: a hostemu started in
// the background by a shell that then exits (`hostemu &` in a CI step) must outlive
// that shell, as before.
//
// Call it from package main's init: init runs on the main thread, which lives as long
// as the process, and the kernel keeps the signal with the thread that asked for it
// (a thread the runtime ends would take the request along). A SIGTERM before Main has
// its handler ends the process at once, which is all there is to do that early.
func EndWithGoRun() {
	ppid := os.Getppid()
	if ppid <= 1 || !isGoCommand(ppid) {
		return
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return
	}
	if os.Getppid() != ppid { // go died before the signal was set
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}

// isGoCommand reports whether the process pid runs the go command (its name, as
// /proc shows it, is "go").
func isGoCommand(pid int) bool {
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "go"
}
