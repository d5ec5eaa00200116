package web

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testutil"
)

// TestFetchRedactsSecrets checks that the secrets of the URLs a call names (a password
// in the userinfo, tokens in the query) are sent, and appear nowhere in what the call
// returns or logs: not in the output, the display, the errors, their causes or the log,
// even where a server echoes them in an error page.
func TestFetchRedactsSecrets(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery)
		mu.Unlock()
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "denied: "+r.URL.String()+" is not allowed", http.StatusForbidden)
		case "/moved":
			http.Redirect(w, r, "/final?token=SECRET2&page=1", http.StatusFound)
		default:
			w.Write([]byte("fine"))
		}
	})
	u, _ := url.Parse(srv.URL)
	withUser := "http://user:PASSWORD@" + u.Host
	closed := "http://127.0.0.1:1/x?signature=SECRET4"
	secrets := []string{"SECRET1", "SECRET2", "SECRET3", "SECRET4", "PASSWORD"}

	var logs testutil.Buffer
	s := newSet(t, Options{AllowPrivate: true, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	prompt := "Read " + srv.URL + "/fail?api_key=SECRET1, " + withUser + "/moved?access_token=SECRET3 and " + closed
	inv, err := testutil.Build(t, fetchOf(s), jsonArgs("prompt", prompt))
	if err != nil {
		t.Fatal(err)
	}
	// The person asked sees what will be sent.
	d, err := inv.Confirmation(t.Context())
	if err != nil || !strings.Contains(strings.Join(d.URLs, " "), "api_key=SECRET1") {
		t.Errorf("Confirmation = %+v, %v; want the URLs as they are sent", d, err)
	}
	res, err := inv.Execute(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"Output": res.Output, "Display": res.Display, "Summary": res.Summary, "Describe": inv.Describe()} {
		wantLacks(t, what, text, secrets...)
	}
	wantContains(t, "Output", res.Output, "fine", "api_key=xxxxx", "user:xxxxx@", "access_token=xxxxx",
		"token=xxxxx&amp;page=1", "signature=xxxxx", "HTTP 403 Forbidden")
	mu.Lock()
	sent := strings.Join(seen, " ")
	mu.Unlock()
	wantContains(t, "the queries the server received", sent, "api_key=SECRET1", "access_token=SECRET3", "token=SECRET2")

	// A call that fails as a whole: the error and its causes.
	_, err = fetch(t, s, "Read "+closed)
	if err == nil {
		t.Fatal("fetching a closed port succeeded")
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		wantLacks(t, "error", e.Error(), secrets...)
	}
	wantContains(t, "error", err.Error(), "signature=xxxxx")
	_, err = fetch(t, s, "Read "+srv.URL+"/fail?api_key=SECRET1")
	if err == nil {
		t.Fatal("fetching an error page succeeded")
	}
	wantLacks(t, "error", err.Error(), secrets...)
	wantContains(t, "error", err.Error(), "denied: /fail?api_key=xxxxx is not allowed")

	wantLacks(t, "log", logs.String(), secrets...)
	wantContains(t, "log", logs.String(), "web_fetch failed")
}

// TestBuildErrorRedacted checks that a URL the call cannot use is named without its
// secrets in the error.
func TestBuildErrorRedacted(t *testing.T) {
	_, err := testutil.Build(t, fetchOf(New(Options{})), jsonArgs("prompt", "read http://1.2.3.256/?token=SECRET"))
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "1.2.3.256") {
		t.Errorf("Build = %v, want an error naming the host without the token", err)
	}
}
