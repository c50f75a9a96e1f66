// Command hostemu runs the hosting and decryption service emulator.
//
//	hostemu [serve] [flags]        start the emulator (the default command)
//	hostemu validate FILE|DIR...   check scenario and fixture files
//	hostemu healthcheck [--url U]  exit 0 when /_emulator/health answers 200 within 2 s
//	hostemu ca [--ca-dir DIR]      print the local CA's certificate
//	hostemu version                version, commit and Go version
//
// The command line lives in package emulator/cli, where it may use the emulator's
// internal packages; this is only its entry point. `hostemu help` lists the flags.
package main

import "github.com/hostemu/hostemu/emulator/cli"

// Set at build time: go build -ldflags "-X main.version=v1.2.3 -X main.commit=abc1234".
var (
	version = "dev"
	commit  = "none"
)

// init runs on the main thread, where the parent-death signal asked for outlives any
// other thread (cli.EndWithGoRun).
func init() { cli.EndWithGoRun() }

func main() { cli.Main(cli.Build{Version: version, Commit: commit}) }
