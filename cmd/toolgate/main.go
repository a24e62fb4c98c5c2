// Command toolgate is the permission gate for AI agents' tool calls.
package main

import (
	"os"

	"github.com/toolgate/toolgate/internal/cli"
)

func main() { os.Exit(cli.Main()) }
