package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/agentls/agentls/settings"
)

// keyPages are where a provider's API key is made.
var keyPages = map[string]string{
	settings.ProviderGemini: "https://aistudio.google.com/apikey",
	settings.ProviderOpenAI: "https://platform.openai.com/api-keys",
}

// cmdLogin asks for the API key of the model's provider and stores it in the user's
// configuration directory (settings.KeysFile, mode 0600), where the model clients
// find it when neither the settings nor the environment give a key. On a terminal the
// key is read without echo; otherwise its first line is read from stdin. This is the
// command an ACP client runs in its terminal for terminal authentication.
func cmdLogin(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls login", flag.ContinueOnError)
	fs.SetOutput(stderr)
	provider := fs.String("provider", "", "the provider whose key to store: gemini or openai (default: the settings' provider.type, else gemini)")
	if err := fs.Parse(args); err != nil {
		return exitBadUsage
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "agentls login: unexpected argument %q\n", fs.Arg(0))
		return exitBadUsage
	}
	dir, err := settings.ConfigDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentls login: %v\n", err)
		return exitFailure
	}
	if *provider == "" {
		*provider = settings.ProviderGemini
		if l, err := settings.LoadWith(dir, "", settings.Options{}); err == nil && l.Settings.Provider.Type != "" {
			*provider = l.Settings.Provider.Type
		}
	}
	page, ok := keyPages[*provider]
	if !ok {
		fmt.Fprintf(stderr, "agentls login: provider %q takes no stored key: want %s or %s (--provider)\n",
			*provider, settings.ProviderGemini, settings.ProviderOpenAI)
		return exitBadUsage
	}
	name := map[string]string{settings.ProviderGemini: "Gemini", settings.ProviderOpenAI: "OpenAI-compatible"}[*provider]
	key, err := readKey(stdin, stderr, fmt.Sprintf("%s API key (from %s; not shown as you type): ", name, page))
	if err != nil {
		fmt.Fprintf(stderr, "agentls login: %v\n", err)
		return exitFailure
	}
	if err := settings.SaveKey(dir, *provider, key); err != nil {
		fmt.Fprintf(stderr, "agentls login: %v\n", err)
		return exitFailure
	}
	env := "GEMINI_API_KEY"
	if *provider == settings.ProviderOpenAI {
		env = "OPENAI_API_KEY"
	}
	fmt.Fprintf(stdout, "The %s API key is stored in %s (readable by you alone). %s, when set, and the settings' provider.apiKey come first; `agentls logout` removes it.\n",
		name, filepath.Join(dir, settings.KeysFile), env)
	return exitOK
}

// readKey reads a secret: without echo from a terminal (after prompt on stderr), else
// the first line of stdin.
func readKey(stdin io.Reader, stderr io.Writer, prompt string) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", fmt.Errorf("reading the key: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the key from stdin: %w", err)
	}
	if strings.TrimSpace(line) == "" {
		return "", errors.New("no key given: type or paste it at the prompt, or pipe it on stdin")
	}
	return strings.TrimSpace(line), nil
}

// cmdLogout removes the API keys `agentls login` stored.
func cmdLogout(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintf(stderr, "agentls logout: unexpected argument %q\n", args[0])
		return exitBadUsage
	}
	dir, err := settings.ConfigDir()
	if err != nil {
		fmt.Fprintf(stderr, "agentls logout: %v\n", err)
		return exitFailure
	}
	had, err := settings.RemoveKeys(dir)
	if err != nil {
		fmt.Fprintf(stderr, "agentls logout: %v\n", err)
		return exitFailure
	}
	if had {
		fmt.Fprintf(stdout, "The stored API keys are removed (%s).", filepath.Join(dir, settings.KeysFile))
	} else {
		fmt.Fprint(stdout, "No API key was stored.")
	}
	fmt.Fprintln(stdout, " Keys in the environment (GEMINI_API_KEY, GOOGLE_API_KEY, OPENAI_API_KEY) or the settings are not agentls's to remove.")
	return exitOK
}
