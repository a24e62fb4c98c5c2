package cli

import "github.com/spf13/cobra"

// hookInstallCmds returns the subcommands of `toolgate hook` that install
// and remove the hooks in the clients' settings; none in this build.
func hookInstallCmds() []*cobra.Command { return nil }
