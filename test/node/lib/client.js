'use strict';
// A small LSP client for the agentls protocol tests, built on vscode-jsonrpc and
// vscode-languageserver-protocol: it spawns the agentls binary in a fresh temporary
// workspace, plays the editor's part (documents with versions, workspace/applyEdit
// applied to its own buffers, answers to prompts chosen by each test) and records every
// message the server sends so the tests can check what was sent and what was not.

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL, fileURLToPath } = require('node:url');
const rpc = require('vscode-languageserver-protocol/node');
const { applyEdits, sequentialChanges } = require('./text');

const repoRoot = path.resolve(__dirname, '..', '..', '..');

let builtBinary;

/**
 * Returns the agentls binary under test: $AGENTLS_BIN, else a fresh `go build` of the
 * checkout this suite lives in (once per test process, into a temporary directory).
 */
function agentlsBinary() {
  if (process.env.AGENTLS_BIN) return path.resolve(process.env.AGENTLS_BIN);
  if (builtBinary) return builtBinary;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-node-bin-'));
  const out = path.join(dir, 'agentls');
  const go = process.env.GO || 'go';
  const env = { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin` };
  execFileSync(go, ['build', '-o', out, './cmd/agentls'], { cwd: repoRoot, env, stdio: ['ignore', 'inherit', 'inherit'] });
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  builtBinary = out;
  return out;
}

let builtFake;

/**
 * Returns the fake Gemini API server binary (internal/fakegemini/cmd/fakegemini):
 * $FAKEGEMINI_BIN, else a fresh `go build` of this checkout's.
 */
function fakeGeminiBinary() {
  if (process.env.FAKEGEMINI_BIN) return path.resolve(process.env.FAKEGEMINI_BIN);
  if (builtFake) return builtFake;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-node-fake-'));
  const out = path.join(dir, 'fakegemini');
  const env = { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin` };
  execFileSync(process.env.GO || 'go', ['build', '-o', out, './internal/fakegemini/cmd/fakegemini'],
    { cwd: repoRoot, env, stdio: ['ignore', 'inherit', 'inherit'] });
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  builtFake = out;
  return out;
}

/**
 * Starts a fake Gemini API replaying script (a clients.Script: {turns: [...]}) and
 * resolves with {url, env, stop}: env is what agentls needs to use it as its model.
 */
async function startFakeGemini(script) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-node-script-'));
  const file = path.join(dir, 'script.json');
  fs.writeFileSync(file, JSON.stringify(script));
  const proc = spawn(fakeGeminiBinary(), ['-script', file, '-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d.toString(); });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = await withTimeout(new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl).trim());
    });
    exited.then((code) => reject(new Error(`fakegemini exited with ${code}: ${stderr}`)));
  }), 10000, 'fakegemini to print its URL');
  return {
    url,
    env: { GEMINI_API_KEY: 'test-key', GOOGLE_GEMINI_BASE_URL: url },
    stderr: () => stderr,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a temporary workspace holding files ({relative path: content}). */
function makeWorkspace(files = {}) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-node-ws-')));
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
  return root;
}

/** The client capabilities of a plain, capable LSP editor (no agentls extensions). */
function baseCapabilities() {
  return {
    general: { positionEncodings: ['utf-16'] },
    workspace: {
      applyEdit: true,
      workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] },
      workspaceFolders: true,
      configuration: false,
      didChangeConfiguration: { dynamicRegistration: false },
      executeCommand: { dynamicRegistration: false },
    },
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: true },
      publishDiagnostics: { relatedInformation: true },
      codeAction: {
        codeActionLiteralSupport: {
          codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'refactor.rewrite', 'source'] },
        },
      },
    },
    window: {},
  };
}

/** The experimental capability that marks a rich agentls client. */
const richExperimental = { agentls: { confirm: true, updates: true } };

/**
 * A running agentls server with this client attached. Fields a test reads:
 *   conn      the vscode-jsonrpc connection
 *   root      the workspace directory
 *   received  every request and notification the server sent, in order ({method, params})
 *   docs      the client's buffers: uri -> {text, version, open}
 *   init      the initialize result (after initialize())
 * Hooks a test sets to answer the server (each may be async):
 *   onApplyEdit(params, client) -> ApplyWorkspaceEditResult | undefined (default: apply)
 *   onConfirm(params) -> {outcome, content?}
 *   onShowMessageRequest(params) -> MessageActionItem | null
 *   onCreateProgress(params) -> null
 */
class Client {
  constructor(opts = {}) {
    this.root = opts.root || makeWorkspace(opts.files || {});
    this.received = [];
    this.docs = new Map();
    this.stderr = '';
    this.waiters = [];
    this.encoding = 'utf-16';
    this.onApplyEdit = undefined;
    this.onConfirm = undefined;
    this.onShowMessageRequest = undefined;
    this.onCreateProgress = undefined;
    // When set, didChange for applied edits waits for flushChanges(), as eglot's does
    // (it reports changes from an idle timer, never while a request is in flight).
    this.deferChanges = false;
    this.pendingChanges = [];

    const args = opts.args || ['serve'];
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-node-home-'));
    this.home = home;
    this.proc = spawn(agentlsBinary(), args, {
      cwd: this.root,
      stdio: ['pipe', 'pipe', 'pipe'],
      // A private HOME, config and state dir: no user settings or sessions of this
      // machine leak in.
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_STATE_HOME: path.join(home, '.local', 'state'), ...(opts.env || {}) },
    });
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => resolve({ code, signal }));
    });
    this.proc.stderr.on('data', (d) => {
      this.stderr += d.toString();
      if (this.stderr.length > 64 * 1024) this.stderr = this.stderr.slice(-32 * 1024);
    });
    this.proc.stdin.on('error', () => {}); // the server may be gone when a test ends

    if (opts.raw) return; // the malformed-message tests speak the wire format themselves

    this.conn = rpc.createProtocolConnection(
      new rpc.StreamMessageReader(this.proc.stdout),
      new rpc.StreamMessageWriter(this.proc.stdin),
    );
    this.conn.onError(() => {});
    this.conn.onNotification((method, params) => this.record(method, params));
    // vscode-jsonrpc hands $/progress to handlers by token, never to the catch-all
    // notification handler: the tokens are the server's, so all of it arrives here.
    this.conn.onUnhandledProgress((params) => this.record('$/progress', params));
    this.conn.onRequest(async (method, params) => {
      this.record(method, params);
      switch (method) {
        case 'workspace/applyEdit':
          return this.handleApplyEdit(params);
        case 'agentls/confirm':
          if (!this.onConfirm) throw new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, 'test: no confirm handler');
          return this.onConfirm(params);
        case 'window/showMessageRequest':
          if (!this.onShowMessageRequest) return null;
          return this.onShowMessageRequest(params);
        case 'window/workDoneProgress/create':
          if (this.onCreateProgress) return this.onCreateProgress(params);
          return null;
        case 'client/registerCapability':
        case 'client/unregisterCapability':
          return null;
        case 'workspace/configuration':
          return (params.items || []).map(() => null);
        case 'workspace/workspaceFolders':
          return [{ uri: pathToFileURL(this.root).href, name: path.basename(this.root) }];
        default:
          throw new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, `test client: unhandled method ${method}`);
      }
    });
    this.conn.listen();
  }

  record(method, params) {
    const msg = { method, params, at: Date.now() };
    this.received.push(msg);
    for (const w of this.waiters.slice()) {
      if (w.pred(msg)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(msg);
      }
    }
  }

  /** Resolves with the first message (already received or future) matching pred. */
  waitFor(pred, what = 'a message', ms = 10000) {
    const seen = this.received.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      this.waiters.push(w);
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}${this.stderrTail()}`));
      }, ms);
      const done = w.resolve;
      w.resolve = (m) => { clearTimeout(timer); done(m); };
    });
  }

  /** Messages received with this method. */
  messages(method) {
    return this.received.filter((m) => m.method === method);
  }

  stderrTail() {
    const tail = this.stderr.trim().split('\n').slice(-15).join('\n');
    return tail ? `\n--- agentls stderr (tail) ---\n${tail}` : '';
  }

  uri(rel) {
    return pathToFileURL(path.join(this.root, rel)).href;
  }

  file(rel) {
    return path.join(this.root, rel);
  }

  /** Sends initialize (and initialized) and returns the result. */
  async initialize({ capabilities = baseCapabilities(), initializationOptions, workspaceFolders, experimental, clientInfo } = {}) {
    if (experimental) capabilities = { ...capabilities, experimental };
    const rootUri = pathToFileURL(this.root).href;
    const params = {
      processId: process.pid,
      clientInfo: clientInfo || { name: 'agentls-node-tests', version: '1' },
      rootUri,
      rootPath: this.root,
      workspaceFolders: workspaceFolders || [{ uri: rootUri, name: path.basename(this.root) }],
      capabilities,
    };
    if (initializationOptions !== undefined) params.initializationOptions = initializationOptions;
    this.init = await this.request('initialize', params);
    if (this.init && this.init.capabilities && this.init.capabilities.positionEncoding) {
      this.encoding = this.init.capabilities.positionEncoding;
    }
    await this.conn.sendNotification('initialized', {});
    return this.init;
  }

  /** Sends a request; a rejection carries the server's stderr tail for diagnosis. */
  async request(method, params, token) {
    try {
      // A server that dies leaves vscode-jsonrpc's promise pending: race it with the exit.
      const died = this.exited.then(({ code, signal }) => {
        throw new Error(`agentls exited (code ${code}, signal ${signal}) before answering ${method}${this.stderrTail()}`);
      });
      died.catch(() => {});
      // Only pass what is given: vscode-jsonrpc sends extra arguments as positional params.
      const args = [method];
      if (params !== undefined) args.push(params);
      if (token !== undefined) args.push(token);
      return await Promise.race([this.conn.sendRequest(...args), died]);
    } catch (err) {
      if (err instanceof rpc.ResponseError) {
        err.message = `${method}: ${err.message} (code ${err.code})${this.stderrTail()}`;
      }
      throw err;
    }
  }

  notify(method, params) {
    return this.conn.sendNotification(method, params);
  }

  /** workspace/executeCommand with one argument object. */
  execute(command, arg = {}, token) {
    return this.request('workspace/executeCommand', { command, arguments: [arg] }, token);
  }

  /** agentls.runTool. */
  runTool(name, args, token) {
    return this.execute('agentls.runTool', { name, args }, token);
  }

  /** Opens rel (with its disk content unless text is given) as an editor buffer. */
  async open(rel, text, languageId = 'plaintext') {
    const uri = this.uri(rel);
    if (text === undefined) text = fs.readFileSync(this.file(rel), 'utf8');
    this.docs.set(uri, { text, version: 1, open: true });
    await this.notify('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    return uri;
  }

  /** Replaces a buffer's whole text, as an editor does on a full-text change. */
  async change(rel, text) {
    const uri = this.uri(rel);
    const doc = this.docs.get(uri);
    doc.text = text;
    doc.version += 1;
    await this.notify('textDocument/didChange', { textDocument: { uri, version: doc.version }, contentChanges: [{ text }] });
  }

  /** The text of a buffer. */
  text(rel) {
    const doc = this.docs.get(this.uri(rel));
    return doc && doc.text;
  }

  /**
   * Handles workspace/applyEdit like an editor: checks every versioned document against
   * its buffer's version, applies the edits to the buffers (never to disk), and reports
   * the change back with didChange, as editors do.
   */
  async handleApplyEdit(params) {
    if (this.onApplyEdit) {
      const answer = await this.onApplyEdit(params, this);
      if (answer !== undefined) return answer;
    }
    return this.applyWorkspaceEdit(params.edit);
  }

  async applyWorkspaceEdit(edit) {
    const plan = [];
    const docEdits = [];
    if (edit.documentChanges) {
      for (const change of edit.documentChanges) {
        if (change.kind) {
          plan.push({ op: change });
          continue;
        }
        docEdits.push({ uri: change.textDocument.uri, version: change.textDocument.version, edits: change.edits });
      }
    } else if (edit.changes) {
      for (const [uri, edits] of Object.entries(edit.changes)) docEdits.push({ uri, version: null, edits });
    }
    // Validate everything before touching anything: an editor applies all or nothing.
    for (const de of docEdits) {
      const doc = this.docs.get(de.uri);
      if (de.version !== null && de.version !== undefined) {
        if (!doc || !doc.open) return { applied: false, failureReason: `document ${de.uri} is not open` };
        if (doc.version !== de.version) {
          return { applied: false, failureReason: `stale version ${de.version} of ${de.uri}: the buffer is at ${doc.version}` };
        }
      }
    }
    for (const p of plan) {
      if (p.op.kind === 'create') this.docs.set(p.op.uri, { text: '', version: 0, open: false, created: true });
      else return { applied: false, failureReason: `test client: resource operation ${p.op.kind} not expected` };
    }
    const notes = [];
    for (const de of docEdits) {
      let doc = this.docs.get(de.uri);
      if (!doc) {
        // A file that is not open: the editor loads it into a (modified) buffer.
        const text = fs.readFileSync(fileURLToPath(de.uri), 'utf8');
        doc = { text, version: 0, open: false };
        this.docs.set(de.uri, doc);
      }
      const edits = de.edits.map((e) => ({ range: e.range, newText: e.newText }));
      doc.text = applyEdits(doc.text, edits, this.encoding);
      if (doc.open) {
        doc.version += 1;
        notes.push({ uri: de.uri, version: doc.version, contentChanges: sequentialChanges(edits) });
      }
    }
    // Like VS Code and eglot, report the applied edit back as incremental changes, whose
    // ranges refer to the text before the edit.
    for (const n of notes) {
      const params = { textDocument: { uri: n.uri, version: n.version }, contentChanges: n.contentChanges };
      if (this.deferChanges) this.pendingChanges.push(params);
      else await this.notify('textDocument/didChange', params);
    }
    return { applied: true };
  }

  /** Sends the didChange notifications held back while deferChanges was set. */
  async flushChanges() {
    const pending = this.pendingChanges.splice(0);
    for (const params of pending) await this.notify('textDocument/didChange', params);
  }

  /** shutdown + exit; resolves with the exit status. */
  async shutdown() {
    const result = await this.request('shutdown');
    await this.notify('exit');
    const status = await withTimeout(this.exited, 5000, `agentls to exit after shutdown+exit${this.stderrTail()}`);
    return { result, status };
  }

  /** Ends the server whatever its state and removes the temporary directories. */
  async dispose() {
    if (this.conn) this.conn.dispose();
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGKILL');
      await this.exited;
    }
    fs.rmSync(this.root, { recursive: true, force: true });
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

/** Rejects if p does not settle within ms. */
function withTimeout(p, ms, what) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms); }),
  ]);
}

/**
 * Runs fn with a started client and always disposes of it. Tests call this rather than
 * new Client so that a failing test leaves no process behind.
 */
async function withClient(opts, fn) {
  const c = new Client(opts);
  try {
    return await fn(c);
  } finally {
    await c.dispose();
  }
}

module.exports = { Client, withClient, withTimeout, baseCapabilities, richExperimental, makeWorkspace, agentlsBinary, startFakeGemini, rpc };
