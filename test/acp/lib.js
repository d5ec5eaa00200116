// Helpers of the ACP tests: the binaries under test, the fake Gemini API, workspaces, and
// `agentls acp` driven by the official TypeScript SDK's client
// (@agentclientprotocol/sdk) over its stdin and stdout.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';

export { acp };

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const built = {};

/** Returns $envVar, else a fresh `go build` of pkg from this checkout. */
function binary(envVar, pkg, name) {
  if (process.env[envVar]) return path.resolve(process.env[envVar]);
  if (built[name]) return built[name];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-acp-bin-'));
  const out = path.join(dir, name);
  const env = { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin` };
  execFileSync(process.env.GO || 'go', ['build', '-o', out, pkg], { cwd: repoRoot, env, stdio: ['ignore', 'inherit', 'inherit'] });
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  built[name] = out;
  return out;
}

/** Rejects with a message naming what was awaited when p takes longer than ms. */
export function withTimeout(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms); });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/**
 * Starts a fake Gemini API replaying script ({turns: [...]}, a clients.Script) and
 * resolves with {env, turnsServed(), requests(), stop()}: env gives agentls its model.
 */
export async function startFakeGemini(script) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-acp-script-'));
  const file = path.join(dir, 'script.json');
  const record = path.join(dir, 'requests.jsonl');
  fs.writeFileSync(file, JSON.stringify(script));
  const proc = spawn(binary('FAKEGEMINI_BIN', './internal/fakegemini/cmd/fakegemini', 'fakegemini'),
    ['-script', file, '-addr', '127.0.0.1:0', '-requests', record], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d.toString(); });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const url = await withTimeout(new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl).trim());
    });
    exited.then((code) => reject(new Error(`fakegemini exited with ${code}: ${stderr}`)));
  }), 20000, 'fakegemini to print its URL');
  const recorded = () => {
    if (!fs.existsSync(record)) return [];
    return fs.readFileSync(record, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.Turn > 0);
  };
  return {
    env: { GEMINI_API_KEY: 'test-key', GOOGLE_GEMINI_BASE_URL: url },
    /** The number of generate calls that consumed a turn, from the server's log. */
    turnsServed: () => (stderr.match(/turn=[1-9]/g) || []).length,
    /**
     * The generate calls that consumed a turn, as the model received them: the request
     * bodies ({contents, tools, ...}), in order.
     */
    requests() { return recorded().map((r) => r.Body); },
    /** The HTTP headers of those calls ({name: [values]}), in order. */
    headers() { return recorded().map((r) => r.Header); },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a temporary directory holding files ({relative path: content}). */
export function makeWorkspace(files = {}) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-acp-ws-')));
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
  return root;
}

/** The variables that give agentls a model: the agents get none but what a test gives. */
const modelEnv = ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL', 'GOOGLE_GENAI_USE_VERTEXAI',
  'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'GOOGLE_APPLICATION_CREDENTIALS', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'];

/** An environment with an empty user configuration and state under home, plus extra. */
export function agentEnv(home, extra = {}) {
  const env = { ...process.env };
  for (const k of modelEnv) delete env[k];
  return {
    ...env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_STATE_HOME: path.join(home, 'state'),
    AGENTLS_LOG_LEVEL: 'debug', ...extra,
  };
}

/** The agentls binary under test. */
export function agentlsBinary() { return binary('AGENTLS_BIN', './cmd/agentls', 'agentls'); }

/** Spawns `agentls acp` with env; its stderr is kept for failure reports. */
export function spawnAgent(env) {
  const proc = spawn(agentlsBinary(), ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d.toString(); });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return { proc, exited, stderr: () => stderr };
}

/**
 * Starts `agentls acp` with env and connects the SDK's client to it. permit(request)
 * answers each session/request_permission with an option id, or with null to answer
 * only when the request is cancelled (then "cancelled"). elicit(params, signal), when
 * given, answers elicitation/create. Resolves with the agent context (agent.request /
 * agent.notify), the updates, permission requests and elicitations seen, and close().
 */
export function startAgent(env, permit = () => null, buffers = null, terminals = null, elicit = null) {
  const { proc, exited, stderr } = spawnAgent(env);
  const updates = [];
  const permissions = [];
  const elicitations = [];
  const writes = [];
  const waiters = [];
  const terminal = (id) => {
    const term = terminals?.get(id);
    if (!term) throw new Error(`no terminal ${id}`);
    return term;
  };
  const app = acp.client({ name: 'agentls-acp-tests' })
    // With terminals (a Map), the client runs terminal/create's commands itself.
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      if (!terminals) throw new Error('terminal not declared');
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, stdio: ['ignore', 'pipe', 'pipe'] });
      const term = { params, child, output: '', released: false };
      term.exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ exitCode: code, signal })));
      child.stdout.on('data', (d) => { term.output += d.toString(); });
      child.stderr.on('data', (d) => { term.output += d.toString(); });
      const id = `term-${terminals.size + 1}`;
      terminals.set(id, term);
      return { terminalId: id };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => terminal(params.terminalId).exit)
    .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
      const term = terminal(params.terminalId);
      const done = term.child.exitCode !== null || term.child.signalCode !== null;
      return { output: term.output, truncated: false, exitStatus: done ? await term.exit : undefined };
    })
    .onRequest(acp.methods.client.terminal.kill, async ({ params }) => {
      const term = terminal(params.terminalId);
      term.child.kill('SIGKILL');
      await term.exit;
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, async ({ params }) => {
      const term = terminal(params.terminalId);
      term.child.kill('SIGKILL');
      await term.exit;
      term.released = true;
      return {};
    })
    // With buffers ({path: text}), the client serves the editor's text of those files
    // (others from the disk) and takes writes into them.
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      if (!buffers) throw new Error('fs not declared');
      if (params.path in buffers) return { content: buffers[params.path] };
      return { content: fs.readFileSync(params.path, 'utf8') };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      if (!buffers) throw new Error('fs not declared');
      buffers[params.path] = params.content;
      writes.push(params);
      return {};
    })
    // With elicit(params, signal), the client answers elicitation/create forms with it.
    .onRequest(acp.methods.client.elicitation.create, async ({ params, signal }) => {
      if (!elicit) throw new Error('elicitation not declared');
      elicitations.push(params);
      return elicit(params, signal);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      permissions.push(params);
      const answer = permit(params);
      if (answer === null) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return { outcome: { outcome: 'cancelled' } };
      }
      // An answer named by a kind is the first option of that kind, as a person
      // clicking the first button of its kind would choose.
      const byKind = params.options.find((o) => o.kind === answer);
      return { outcome: { outcome: 'selected', optionId: byKind ? byKind.optionId : answer } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
      for (const w of [...waiters]) {
        if (w.match(params)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(params);
        }
      }
    });
  const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const conn = app.connect(stream);
  let closed = false;
  return {
    agent: conn.agent,
    updates,
    permissions,
    writes,
    elicitations,
    stderr,
    /** Resolves with the first update from now on that match(notification) accepts. */
    waitFor(match, what) {
      return withTimeout(new Promise((resolve) => waiters.push({ match, resolve })), 60000, what);
    },
    /** Returns the updates of the session of the given kind (sessionUpdate). */
    of(kind) { return updates.filter((n) => n.update.sessionUpdate === kind).map((n) => n.update); },
    /**
     * Resolves once the updates that arrived before the last answer are handled: the
     * SDK resolves an answer as it reads it, while the handlers of the notifications
     * read before it may still be running.
     */
    settled(cond, what) { return until(cond, what); },
    async close() {
      if (closed) return;
      closed = true;
      conn.close();
      proc.stdin.end();
      const r = await withTimeout(exited, 30000, 'agentls acp to exit');
      if (r.code !== 0) throw new Error(`agentls acp exited with ${JSON.stringify(r)}:\n${stderr()}`);
    },
  };
}

/** Initializes the connection as a client with capabilities (default: no fs or terminal). */
export function initialize(agent, clientCapabilities = {}) {
  return agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: { name: 'agentls-acp-tests', version: '1' },
  });
}

/** Reports whether a process's command line is cmdline. */
export function processRunning(cmdline) {
  for (const pid of fs.readdirSync('/proc')) {
    let b;
    try { b = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { continue; }
    if (b.replace(/\0+$/, '').split('\0').join(' ') === cmdline) return true;
  }
  return false;
}

/** Resolves once cond() holds, polling; rejects after ms naming what. */
export async function until(cond, what, ms = 30000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
