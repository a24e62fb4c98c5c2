//go:build !linux

package pathres

// kernelReal is only available on Linux; elsewhere the path is walked.
func kernelReal(string) (string, bool) { return "", false }
