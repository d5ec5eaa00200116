package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testutil"
)

// TestMCPStepUpOverACP: an MCP server the user authorized with `agentls mcp auth`
// refuses a call with 403 insufficient_scope in the middle of an ACP session; its
// authorization page reaches the user — as a URL question to a client that takes
// them, as a link in the agent's message to one that does not — and once the user
// opens it (the test follows its redirects, as a browser does), the call succeeds.
// A client that declines the page gets an error for the call, and no second
// authorization happens.
func TestMCPStepUpOverACP(t *testing.T) {
	urlCaps := sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}, Url: &sdk.ElicitationUrlCapabilities{}}}
	// The user's browser: it follows a page's redirects.
	open := (&testutil.Browser{}).Open
	for _, tc := range []struct {
		name       string
		caps       sdk.ClientCapabilities
		decline    bool
		authorizes int
		output     string
	}{
		{"url question", urlCaps, false, 2, "written"},
		{"link in the message", sdk.ClientCapabilities{}, false, 2, "written"},
		{"declined", urlCaps, true, 1, "was not opened"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			// tools/call wants a scope the first authorization did not grant.
			o := testutil.NewStepUpServers(t, 2)

			root, _ := filepath.EvalSymlinks(t.TempDir())
			cfg, state := t.TempDir(), t.TempDir()
			testutil.WriteFiles(t, cfg, map[string]string{
				"agentls/settings.json": `{"mcpServers": {"gh": {"httpUrl": "` + o.Endpoint + `", "trust": true}}}`})
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			auth := exec.CommandContext(ctx, buildBinary(t), "mcp", "auth", "gh", "--root", root)
			auth.Env = env(cfg, state, "BROWSER="+self, "AGENTLS_TEST_BROWSER=1")
			if out, err := auth.CombinedOutput(); err != nil {
				t.Fatalf("agentls mcp auth: %v\n%s", err, out)
			}
			if n := o.Stats().Authorizes; n != 1 {
				t.Fatalf("%d authorizations by mcp auth, want 1", n)
			}

			fake, model := fakeModel(t,
				clients.Turn{Calls: []clients.ScriptCall{call("w1", "gh__write", map[string]any{})}},
				clients.Turn{Text: "done"},
			)
			a := start(t, env(cfg, state, model...), func(sdk.RequestPermissionRequest) sdk.PermissionOptionId { return "allow_once" })
			a.client.elicit = func(ctx context.Context, r sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
				if r.Url == nil {
					return sdk.NewUnstableCreateElicitationResponseDecline(), nil
				}
				if tc.decline {
					return sdk.NewUnstableCreateElicitationResponseDecline(), nil
				}
				// The user opens the page, then accepts.
				go open(context.Background(), "gh", r.Url.Url)
				return sdk.NewUnstableCreateElicitationResponseAccept(), nil
			}
			a.initializeWith(ctx, tc.caps)
			s := a.newSession(ctx, root)
			if tc.caps.Elicitation == nil {
				// The user reads the link in the agent's message and opens it.
				link := regexp.MustCompile(`wider authorization: open the page to grant agentls the access it needs: ([^\s\\"]+)`)
				go func() {
					for ctx.Err() == nil {
						if m := link.FindStringSubmatch(strings.ReplaceAll(a.wire.String(), `\u0026`, "&")); m != nil {
							open(ctx, "gh", m[1])
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			if res, err := a.prompt(ctx, s.SessionId, "write it"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			got, _ := json.Marshal(toolResponse(t, fake, "gh__write"))
			if !strings.Contains(string(got), tc.output) {
				t.Errorf("the model got %s, want %q in it", got, tc.output)
			}
			if n := o.Stats().Authorizes; n != tc.authorizes {
				t.Errorf("%d authorizations, want %d", n, tc.authorizes)
			}
			sent := wireParams(t, a, "elicitation/create")
			if tc.caps.Elicitation == nil {
				if len(sent) != 0 {
					t.Errorf("a client without URL questions was sent %v", sent)
				}
				return
			}
			if len(sent) != 1 || sent[0]["mode"] != "url" || !strings.HasPrefix(fmt.Sprint(sent[0]["url"]), o.AS.URL) ||
				sent[0]["toolCallId"] != string(s.SessionId)+"/w1" {
				t.Errorf("elicitation/create %v, want one URL question for the authorization server's page, scoped to the call", sent)
			}
		})
	}
}
