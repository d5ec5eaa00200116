#!/usr/bin/env bash
# The conformance suite's client in run.sh's user mode: it reaches the scenario's server
# the way a person does, through agentls's own commands and settings, never through the
# hidden conformance-client:
#   1. a user settings.json names the server (the scenario's URL, last argument); for an
#      auth scenario with the oauth block a person would write: the client ID and
#      secret, key or identity provider the scenario hands over in
#      $MCP_CONFORMANCE_CONTEXT (as a person copies them from their provider's console;
#      an ID token obtained at the identity provider through the command that prints it,
#      "idTokenCommand"), and the URL of their client ID metadata document
#      ("clientMetadataUrl", the suite's);
#   2. for an auth scenario, `agentls mcp auth conformance --root WS` authorizes, its
#      browser step done by $BROWSER (browser.mjs);
#   3. the scenario's call as the agent would make it, in a new process that takes the
#      stored token (a step-up happens here): `agentls run conformance__TOOL JSON --root
#      WS`; for initialize, `agentls tools --root WS`, which connects to list the tools.
#      A server's question (elicitation) is answered on a terminal, as a person answers
#      it: an empty line at each field's prompt takes its default. `script` gives the
#      command its terminal.
# AGENTLS_BIN names the binary. Everything lives in a temporary HOME.
set -euo pipefail
url=${!#}
scenario=${MCP_CONFORMANCE_SCENARIO:?}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export HOME="$dir/home" XDG_CONFIG_HOME="$dir/config" XDG_STATE_HOME="$dir/state"
ws="$dir/ws"
mkdir -p "$HOME" "$XDG_CONFIG_HOME/agentls" "$XDG_STATE_HOME" "$ws"

# The settings, written from the scenario's context by node (the suite's own runtime).
SCENARIO="$scenario" URL="$url" DIR="$dir" node --input-type=module -e '
import { writeFileSync } from "node:fs";
const cc = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const auth = process.env.SCENARIO.startsWith("auth/");
const oauth = { clientMetadataUrl: "https://conformance-test.local/client-metadata.json" };
if (cc.client_id) oauth.clientId = cc.client_id;
if (cc.client_secret) oauth.clientSecret = cc.client_secret;
if (process.env.SCENARIO.startsWith("auth/client-credentials-")) {
  oauth.grantType = "client_credentials";
  delete oauth.clientMetadataUrl;
}
if (cc.private_key_pem) {
  const key = `${process.env.DIR}/client-key.pem`;
  writeFileSync(key, cc.private_key_pem, { mode: 0o600 });
  delete oauth.clientSecret;
  oauth.privateKeyFile = key;
  if (cc.signing_algorithm) oauth.signingAlgorithm = cc.signing_algorithm;
}
if (cc.idp_issuer) {
  oauth.enterprise = { issuer: cc.idp_issuer, tokenUrl: cc.idp_token_endpoint, clientId: cc.idp_client_id };
  if (cc.idp_id_token) {
    // The ID token the person got from their identity provider elsewhere (a company
    // single sign-on tool), printed by a command as such a tool would.
    const file = process.env.DIR + "/id-token";
    writeFileSync(file, cc.idp_id_token + "\n", { mode: 0o600 });
    oauth.enterprise.idTokenCommand = "cat " + file;
  }
}
const server = { url: process.env.URL, trust: true, timeout: 20000 };
if (auth) server.oauth = oauth;
const settings = { mcpServers: { conformance: server } };
writeFileSync(`${process.env.XDG_CONFIG_HOME}/agentls/settings.json`, JSON.stringify(settings, null, 2));
'

case $scenario in
auth/*)
	"$AGENTLS_BIN" mcp auth conformance --root "$ws"
	"$AGENTLS_BIN" run conformance__test-tool '{}' --root "$ws"
	;;
initialize) "$AGENTLS_BIN" tools --root "$ws" ;;
tools_call) "$AGENTLS_BIN" run conformance__add_numbers '{"a": 2, "b": 3}' --root "$ws" ;;
sse-retry) "$AGENTLS_BIN" run conformance__test_reconnection '{}' --root "$ws" ;;
elicitation-sep1034-client-defaults)
	# Five fields, each taken at its default with an empty line; the answers are typed
	# ahead into the terminal, which keeps them until agentls reads them.
	printf '\n\n\n\n\n' | script -qefc "$(printf '%q ' "$AGENTLS_BIN" run conformance__test_client_elicitation_defaults '{}' --root "$ws")" /dev/null
	;;
*)
	echo "user-client.sh: no user steps for the scenario $scenario" >&2
	exit 2
	;;
esac
