package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain URL", "https://example.com/a/b?q=go&page=2#top", "https://example.com/a/b?q=go&page=2#top"},
		{"no URL", "connection refused; try again & again", "connection refused; try again & again"},
		{"password", "http://user:hunter2@example.com/x", "http://user:xxxxx@example.com/x"},
		{"password with colon and at", "http://user:a:b@c@example.com/", "http://user:xxxxx@example.com/"},
		{"lone user is a token", "https://ghp_abc123@github.com/o/r.git", "https://xxxxx@github.com/o/r.git"},
		{"empty userinfo", "http://@example.com/", "http://@example.com/"},
		{"DSN", "dial postgres://app:pa55@db:5432/x failed", "dial postgres://app:xxxxx@db:5432/x failed"},
		{"at in path is not userinfo", "http://example.com/@user", "http://example.com/@user"},
		{"at in query is not userinfo", "http://example.com/?to=a@b.c", "http://example.com/?to=a@b.c"},
		{"api_key", "http://h/p?api_key=SECRET", "http://h/p?api_key=xxxxx"},
		{"second param", "http://h/p?a=1&token=SECRET&b=2", "http://h/p?a=1&token=xxxxx&b=2"},
		{"case", "http://h/?API_KEY=SECRET&ApiKey=S2&apikey=S3", "http://h/?API_KEY=xxxxx&ApiKey=xxxxx&apikey=xxxxx"},
		{"names", "http://h/?key=1&access_token=2&auth=3&password=4&secret=5&sig=6&signature=7&client_secret=8&code=9&refresh_token=10&api-key=11&accessToken=12&X-Amz-Security-Token=13&X-Amz-Credential=14&private_token=15",
			"http://h/?key=xxxxx&access_token=xxxxx&auth=xxxxx&password=xxxxx&secret=xxxxx&sig=xxxxx&signature=xxxxx&client_secret=xxxxx&code=xxxxx&refresh_token=xxxxx&api-key=xxxxx&accessToken=xxxxx&X-Amz-Security-Token=xxxxx&X-Amz-Credential=xxxxx&private_token=xxxxx"},
		{"S3 presigned", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Signature=abcdef0123",
			"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Signature=xxxxx"},
		{"Azure SAS", "https://a.blob.core.windows.net/c/b?sv=2020-08-04&se=2026&sp=r&sig=abc%2Bdef%3D", "https://a.blob.core.windows.net/c/b?sv=2020-08-04&se=2026&sp=r&sig=xxxxx"},
		{"escaped name", "http://h/?api%5Fkey=SECRET", "http://h/?api%5Fkey=xxxxx"},
		{"value with equals", "http://h/?token=abc==&x=1", "http://h/?token=xxxxx&x=1"},
		{"non-secret look-alikes", "http://h/?monkey=1&keyword=2&tokens_left=3&author=4", "http://h/?monkey=1&keyword=2&tokens_left=3&author=4"},
		{"empty value", "http://h/?token=&x=1", "http://h/?token=&x=1"},
		{"semicolon", "http://h/?a=1;token=SECRET", "http://h/?a=1;token=xxxxx"},
		{"fragment", "https://app.example/cb#access_token=SECRET&state=s", "https://app.example/cb#access_token=xxxxx&state=s"},
		{"Go error", `Get "http://u:p@127.0.0.1:1/mcp?token=SECRET": dial tcp 127.0.0.1:1: connect: connection refused`,
			`Get "http://u:xxxxx@127.0.0.1:1/mcp?token=xxxxx": dial tcp 127.0.0.1:1: connect: connection refused`},
		{"two URLs", "redirect from http://a/?key=K1 to https://b:pw@c/?sig=K2.", "redirect from http://a/?key=xxxxx to https://b:xxxxx@c/?sig=xxxxx."},
		{"prose punctuation", "(see http://h/?token=SECRET), then", "(see http://h/?token=xxxxx), then"},
		{"request line", "POST /mcp?session=S1&token=SECRET HTTP/1.1", "POST /mcp?session=xxxxx&token=xxxxx HTTP/1.1"},
		{"HTML escaped", `<a href="http://h/?a=1&amp;token=SECRET">`, `<a href="http://h/?a=1&amp;token=xxxxx">`},
		{"JSON escaped", `{"url":"http://h/?a=1\u0026token=SECRET\u0026b=2"}`, `{"url":"http://h/?a=1\u0026token=xxxxx\u0026b=2"}`},
		{"quoted with %q escapes", `"http://h/?token=ab\u00e9cd" refused`, `"http://h/?token=xxxxx" refused`},
		{"angle brackets", "<http://h/?token=SECRET>", "<http://h/?token=xxxxx>"},
		{"newline ends value", "http://h/?token=SECRET\nnext line", "http://h/?token=xxxxx\nnext line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.want {
				t.Errorf("Text(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestURL(t *testing.T) {
	u, err := url.Parse("https://me:hunter2@example.com/p?q=1&api_key=SECRET")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := URL(u), "https://me:xxxxx@example.com/p?q=1&api_key=xxxxx"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if got := URL(nil); got != "" {
		t.Errorf("URL(nil) = %q", got)
	}
	// The URL itself is left alone: it is still the one to fetch.
	if u.Query().Get("api_key") != "SECRET" {
		t.Errorf("URL changed its argument: %s", u)
	}
}

func TestSecretName(t *testing.T) {
	for _, name := range []string{"key", "Key", "api_key", "apiKey", "APIKEY", "api-key", "token", "id_token",
		"oauth_token", "auth", "Authorization", "password", "passwd", "pwd", "secret", "client_secret",
		"clientSecret", "sig", "signature", "X-Amz-Signature", "X-Goog-Signature", "X-Goog-Credential",
		"code", "hapikey", "sessionid", "JSESSIONID", "AWSAccessKeyId"} {
		if !secretName(name) {
			t.Errorf("%q is not taken for a secret", name)
		}
	}
	for _, name := range []string{"q", "page", "author", "keyword", "monkey", "tokens", "codec", "signed", "state", "", "_"} {
		if secretName(name) {
			t.Errorf("%q is taken for a secret", name)
		}
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil)))
	u, _ := url.Parse("http://u:pw1@h/?token=SECRET2")
	type config struct{ Endpoint string }
	log.With("base", "http://h/?key=SECRET3").WithGroup("g").Info(`failed "http://h/?sig=SECRET4"`,
		"err", errors.New("Get http://h/?api_key=SECRET5: refused"),
		"url", u,
		"raw", []byte("http://h/?password=SECRET6"),
		"cfg", config{Endpoint: "http://h/?secret=SECRET7"},
		slog.Group("inner", "s", "http://h/?auth=SECRET8"),
		"n", 42, "plain", config{Endpoint: "http://h/"})
	out := buf.String()
	for i := 1; i <= 8; i++ {
		s := fmt.Sprintf("SECRET%d", i)
		if i == 1 {
			s = "pw1"
		}
		if strings.Contains(out, s) {
			t.Errorf("log holds %s:\n%s", s, out)
		}
	}
	for _, want := range []string{`base="http://h/?key=xxxxx"`, `g.err="Get http://h/?api_key=xxxxx: refused"`, `g.cfg="{Endpoint:http://h/?secret=xxxxx}"`, "g.n=42", "g.inner.s=", "g.plain={Endpoint:http://h/}", "xxxxx"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	var nilErr *url.Error
	log.Info("nil", "err", nilErr) // must not panic
}

func TestError(t *testing.T) {
	if Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
	plain := errors.New("no URL here")
	if Error(plain) != plain {
		t.Error("an error without secrets was wrapped")
	}
	cause := &url.Error{Op: "Get", URL: "http://h/?token=SECRET", Err: errors.New("refused")}
	err := fmt.Errorf("fetching: %w", cause)
	masked := Error(err)
	if got, want := masked.Error(), `fetching: Get "http://h/?token=xxxxx": refused`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if ue, ok := errors.AsType[*url.Error](masked); !ok || ue != cause {
		t.Errorf("the cause is lost: %v", ue)
	}
}
