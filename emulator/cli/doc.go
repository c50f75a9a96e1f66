// Package cli is the hostemu command line: Run parses the arguments and
// HOSTEMU_* variables and runs a command. cmd/hostemu is its thin main.
//
//	hostemu [serve] [flags]        start the emulator (the default command)
//	hostemu validate FILE|DIR...   check scenario and fixture files
//	hostemu healthcheck [--url U]  exit 0 when /_emulator/health answers 200 within 2 s
//	hostemu replay FILE [flags]    serve the world of a failure bundle
//	hostemu coverage [--url U]     which operations, answers and edges clients exercised
//	hostemu version                version, commit and Go version
//
// Every serve flag also reads HOSTEMU_<NAME>, upper case with dashes as underscores
// (--cipher-addr from HOSTEMU_CIPHER_ADDR). A flag given on the command line beats its
// variable, even when given empty; a variable set to the empty string counts as unset.
// A bad value, from a flag or a variable, stops the start with a message naming it and
// exit code 2. Beyond the product's flags, serve takes --log-level
// debug|info|warn|error (default info), and accepts true/false for --rate-limits.
//
// serve prints "hostemu listening on URL" as its first line on stdout, then the
// emulator's banner, and logs to stderr. On SIGTERM or SIGINT it stops accepting, lets
// in-flight requests finish for up to 5 s and exits 0; it exits 1 if they did not
// finish or the state could not be saved. A second SIGINT kills it at once.
//
// healthcheck exits 1, never 2, on bad arguments, since Docker reserves 2 in a
// HEALTHCHECK. --url may be a base URL (http://hostemu:4700), host:port, or the full
// health URL. Without it the URL comes from HOSTEMU_ADDR, the wildcard hosts 0.0.0.0
// and :: read as 127.0.0.1.
package cli
