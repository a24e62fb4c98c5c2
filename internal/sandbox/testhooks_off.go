//go:build !toolgate_sandbox_testhooks

package sandbox

// testHooks: a binary built without -tags toolgate_sandbox_testhooks
// honours DisableEnv only inside a test binary.
const testHooks = false
