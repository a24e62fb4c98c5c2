package approval_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/toolgate/toolgate/internal/approval"
)

// A Terminal reads answers from In and writes questions to Out; both
// default to /dev/tty. Here the person denies the call and says why.
func ExampleTerminal() {
	term := &approval.Terminal{In: strings.NewReader("d\nuse the test script\n"), Out: io.Discard}
	defer term.Close()
	answer, err := term.Approve(context.Background(), &approval.Request{
		Tool: "Bash", Summary: "Bash: make deploy", Risk: "execute",
		SuggestedRule: "Bash(make deploy:*)",
	})
	fmt.Println(answer.Kind, answer.Message, err)
	// Output: deny use the test script <nil>
}
