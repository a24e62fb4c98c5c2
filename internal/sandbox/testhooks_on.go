//go:build toolgate_sandbox_testhooks

package sandbox

// testHooks: this binary was built for tests (-tags
// toolgate_sandbox_testhooks), so DisableEnv is honoured.
const testHooks = true
