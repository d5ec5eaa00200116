// A $BROWSER for the conformance run: it opens the authorization URL agentls gives it
// and follows the redirects, as a person's browser would after they consent; the last
// one lands on agentls's loopback listener, which completes the OAuth flow.
const url = process.argv[2];
if (!url) {
  console.error('usage: browser.mjs URL');
  process.exit(2);
}
const res = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(20000) });
await res.text();
if (!res.ok) {
  console.error(`browser.mjs: ${res.status} from ${res.url}`);
  process.exit(1);
}
