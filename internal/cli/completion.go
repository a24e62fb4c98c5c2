package cli

import (
	"github.com/spf13/cobra"
)

// completionCmd is `toolgate completion bash|zsh|fish`: the shell
// completion script cobra generates for the whole command tree.
func completionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script for bash, zsh or fish",
		Long: `completion prints the script that completes toolgate's commands, flags and
arguments (hook clients, doctor's checks) in your shell. Install it once:

  bash  toolgate completion bash > ~/.local/share/bash-completion/completions/toolgate
        (needs the bash-completion package)
  zsh   toolgate completion zsh > "${fpath[1]}/_toolgate"
        (with compinit in ~/.zshrc; open a new shell)
  fish  toolgate completion fish > ~/.config/fish/completions/toolgate.fish

or load it into the running shell only: source <(toolgate completion bash).`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args: func(c *cobra.Command, args []string) error {
			if err := cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs)(c, args); err != nil {
				return usageError("%v: name bash, zsh or fish", err)
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			root, out := c.Root(), c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			default:
				return root.GenFishCompletion(out, true)
			}
		},
	}
}
