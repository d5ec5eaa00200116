// bench/acp/driver.mjs — times one ACP agent (agentls acp, or gemini --acp) as an editor
// drives it, with the official TypeScript SDK (test/acp's pinned
// @agentclientprotocol/sdk) as the client and a fresh fake Gemini API per round:
// session/new and one scripted turn end to end (a prompt whose model turn calls
// read_file, then answers), each round checked (the answer's stop reason, the file's
// text reaching the model, both scripted turns consumed). Prints one line per round:
// "NAME new_ms=… turn_ms=…". (Spawn to initialize is bench/acp/inittime's: Node.js's
// own spawn costs about 100 ms here.)
//
// node driver.mjs NAME FAKEGEMINI HOME WORKSPACE ROUNDS -- COMMAND ARGS...
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const acp = await import(require.resolve('@agentclientprotocol/sdk', { paths: [path.join(import.meta.dirname, '..', '..', 'test', 'acp')] }));

const [name, fakeBin, home, ws, rounds, dashes, ...cmd] = process.argv.slice(2);
if (dashes !== '--' || cmd.length === 0) throw new Error('usage: driver.mjs NAME FAKEGEMINI HOME WORKSPACE ROUNDS -- COMMAND ARGS...');
const marker = 'ACP-BENCH-FILE-TEXT';
fs.writeFileSync(path.join(ws, 'notes.txt'), `${marker}\n`);
const script = path.join(home, 'script.json');
fs.writeFileSync(script, JSON.stringify({
  turns: [
    { calls: [{ id: 'r1', name: 'read_file', args: { file_path: path.join(ws, 'notes.txt') } }] },
    { text: 'The notes say what they say. ACP-BENCH-DONE' },
  ],
}));

function within(p, ms, what) {
  let t;
  return Promise.race([p, new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${name}: timed out: ${what}`)), ms); })]).finally(() => clearTimeout(t));
}

async function startFake(dir) {
  const log = path.join(dir, 'fake.log');
  const requests = path.join(dir, 'requests.jsonl');
  const proc = spawn(fakeBin, ['-script', script, '-addr', '127.0.0.1:0', '-requests', requests], { stdio: ['ignore', 'pipe', fs.openSync(log, 'w')] });
  const url = await within(new Promise((resolve) => {
    let out = '';
    proc.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(out.split('\n')[0].trim()); });
  }), 20000, 'fakegemini');
  return { url, log, requests, stop: () => proc.kill('SIGTERM') };
}

for (let round = 0; round < Number(rounds); round++) {
  const dir = fs.mkdtempSync(path.join(home, 'round-'));
  const fake = await startFake(dir);
  const env = { ...process.env, HOME: home, GEMINI_API_KEY: 'fake', GOOGLE_GEMINI_BASE_URL: fake.url,
    XDG_CONFIG_HOME: path.join(home, '.config'), XDG_STATE_HOME: path.join(dir, 'state'), XDG_CACHE_HOME: path.join(home, '.cache') };
  const proc = spawn(cmd[0], cmd.slice(1), { cwd: ws, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const app = acp.client({ name: 'acp-bench' })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const allow = params.options.find((o) => o.kind === 'allow_once') ?? params.options[0];
      return { outcome: { outcome: 'selected', optionId: allow.optionId } };
    })
    .onNotification(acp.methods.client.session.update, () => {});
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  try {
    await within(conn.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: 'acp-bench', version: '1' },
    }), 60000, 'initialize');
    const t1 = performance.now();
    const { sessionId } = await within(conn.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] }), 60000, 'session/new');
    const t2 = performance.now();
    const res = await within(conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'What do the notes in notes.txt say?' }] }), 120000, 'the turn');
    const t3 = performance.now();
    const log = fs.readFileSync(fake.log, 'utf8');
    const turns = (log.match(/turn=[1-9]/g) || []).length;
    const read = fs.existsSync(fake.requests) && fs.readFileSync(fake.requests, 'utf8').includes(marker);
    if (res.stopReason !== 'end_turn' || turns !== 2 || !read) {
      throw new Error(`${name}: stop reason ${res.stopReason}, ${turns} of 2 scripted turns consumed, the file's text ${read ? '' : 'not '}sent to the model\n${log.slice(-3000)}`);
    }
    console.log(`${name} new_ms=${(t2 - t1).toFixed(1)} turn_ms=${(t3 - t2).toFixed(1)}`);
  } catch (err) {
    console.error(`${err.message}\n--- ${name} stderr\n${stderr.slice(-4000)}`);
    process.exitCode = 1;
  } finally {
    conn.close();
    proc.stdin.end();
    await within(exited, 10000, 'exit').catch(() => proc.kill('SIGKILL'));
    fake.stop();
  }
  if (process.exitCode) break;
}
