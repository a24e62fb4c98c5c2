// Package e2e holds toolgate's end-to-end tests: they build the toolgate
// binary, run `toolgate serve` as a real process with its own home and
// state directory, and drive the approval page in headless Chromium while
// an agent's calls wait on POST /v1/check.
//
// The tests need /usr/bin/chromium (Debian's chromium package). Without it
// they skip, unless TOOLGATE_E2E=1 is set, when they fail instead.
// Screenshots of the page at desktop and phone width are written to
// $TOOLGATE_ARTIFACTS, or to a temporary directory whose path the test
// logs.
//
//	TOOLGATE_E2E=1 TOOLGATE_ARTIFACTS=/tmp/shots go test ./e2e -v
package e2e
