// The chat: a webview view in the side bar. Prompts go to the agent (agentls/prompt)
// with the active file and selection as context and #file mentions attached; the
// answer streams in as Markdown (rendered here with markdown-it, raw HTML off), tool
// calls as cards with their status, locations, live output, diff and the question
// waiting on them; the plan as a checklist. One conversation is shown at a time; it
// continues its session, and a stored session can be resumed into it.
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { atLines } from './diagnostics';
import MarkdownIt from 'markdown-it';
import { ChatItem, isFinal, locationLabel, ToolItem, Transcript, Usage } from './logic/chat';
import { choices, question, alwaysNote } from './logic/confirm';
import { plainAnswers } from './logic/ask';
import { commandSuggestions, mentionFor, parseMentions, PromptEntry, withAttachments } from './logic/mentions';
import { Confirmations } from './confirm';
import { Server } from './server';

/** The session of calls started from the editor (agentls.runTool): never a chat's. */
export const editorSession = 'editor';

interface PromptResult {
  session: string;
  stopReason: string;
  text: string;
  usage?: Usage;
  error?: { message?: string };
}

interface PromptParams {
  prompt: string;
  session?: string;
  uri?: string;
  range?: unknown;
  diagnostic?: unknown;
}

interface Running {
  transcript: Transcript;
  cts: vscode.CancellationTokenSource;
  cancelled: boolean;
}

export interface ChatState {
  session: string | undefined;
  running: boolean;
  items: ChatItem[];
}

export class Chat implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'agentls.chat';
  private view: vscode.WebviewView | undefined;
  private transcript = new Transcript();
  /** Every transcript of this window by session, so updates of any of them land. */
  private bySession = new Map<string, Transcript>();
  /** The transcript whose first prompt runs, waiting to learn its session. */
  private unbound: Transcript | undefined;
  private running: Running | undefined;
  private lastEditor: vscode.TextEditor | undefined;
  private contextEnabled = true;
  private md = new MarkdownIt({ html: false, linkify: true, breaks: false });
  private dirty = new Set<number>();
  private flushTimer: NodeJS.Timeout | undefined;
  private disposables: vscode.Disposable[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private fileList: string[] | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: Server,
    private readonly confirmations: Confirmations,
    private readonly log: (msg: string) => void,
  ) {
    this.lastEditor = fileEditor(vscode.window.activeTextEditor);
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (fileEditor(e)) {
          this.lastEditor = e;
          this.contextEnabled = vscode.workspace.getConfiguration('agentls').get('chat.includeActiveFile', true);
        } else if (e === undefined && this.lastEditor && !vscode.window.visibleTextEditors.includes(this.lastEditor)) {
          this.lastEditor = undefined;
        }
        this.postState();
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (fileEditor(e.textEditor)) {
          this.lastEditor = e.textEditor;
          this.postState();
        }
      }),
      confirmations.onDidChange(() => {
        // Cards of calls whose question came or went.
        for (const t of this.transcript.openTools()) {
          const i = this.transcript.toolIndex(t.id);
          if (i !== undefined) {
            this.dirty.add(i);
          }
        }
        this.scheduleFlush();
      }),
      vscode.workspace.onDidCreateFiles(() => (this.fileList = undefined)),
      vscode.workspace.onDidDeleteFiles(() => (this.fileList = undefined)),
      this.changed,
    );
    this.contextEnabled = vscode.workspace.getConfiguration('agentls').get('chat.includeActiveFile', true);
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }

  /** What the chat shows, for the extension's API (tests, other extensions). */
  state(): ChatState {
    return { session: this.transcript.session, running: this.running !== undefined, items: this.transcript.items };
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const codicons = vscode.Uri.joinPath(this.extensionUri, 'dist', 'codicons');
    view.webview.options = { enableScripts: true, localResourceRoots: [media, codicons] };
    view.webview.html = this.html(view.webview, media, codicons);
    view.webview.onDidReceiveMessage((m) => this.onMessage(m), undefined, this.disposables);
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
      }
    });
    view.onDidChangeVisibility(() => {
      if (view.visible) {
        this.postAll();
      }
    });
  }

  /** Shows the chat in the side bar, optionally with text in its input. */
  async reveal(draft?: string): Promise<void> {
    await vscode.commands.executeCommand(`${Chat.viewId}.focus`);
    if (draft !== undefined) {
      void this.view?.webview.postMessage({ type: 'draft', text: draft });
    }
  }

  /** Starts a new conversation (the next prompt starts a new session). */
  newChat(): void {
    if (this.running) {
      void vscode.window.showWarningMessage('agentls: a prompt is running; cancel it first.');
      return;
    }
    this.transcript = new Transcript();
    this.postAll();
    this.changed.fire();
  }

  /**
   * Binds the chat to a stored session: the next prompt continues it. A session this
   * window did not show comes with its conversation (agentls.sessionHistory).
   */
  async resume(session: string, title?: string): Promise<void> {
    if (this.running) {
      void vscode.window.showWarningMessage('agentls: a prompt is running; cancel it first.');
      return;
    }
    const known = this.bySession.get(session);
    if (known) {
      this.transcript = known;
    } else {
      const t = new Transcript();
      let history: { updates?: unknown[] } | undefined;
      let failure: string | undefined;
      try {
        history = await this.server.request<{ updates?: unknown[] }>('workspace/executeCommand', {
          command: 'agentls.sessionHistory',
          arguments: [{ session }],
        });
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
        this.log(`history of ${session}: ${failure}`);
      }
      if (this.running || this.bySession.has(session)) {
        // A prompt started, or the session came in, while the history loaded.
        return this.resume(session, title);
      }
      const prompts = Array.isArray(history?.updates) ? t.replay(history.updates) : 0;
      t.session = session;
      t.title = title ?? t.title;
      const name = `${t.title ? `“${t.title}” ` : ''}(${session})`;
      if (failure !== undefined) {
        t.addNote(`Resumed session ${name}; its conversation could not be shown: ${failure}. The next prompt continues it.`, 'warning');
      } else {
        t.addNote(`Resumed session ${name}: ${prompts} earlier prompt${prompts === 1 ? '' : 's'}. The next prompt continues it.`);
      }
      this.transcript = t;
      this.bySession.set(session, t);
    }
    this.postAll();
    this.changed.fire();
  }

  /**
   * Sends a prompt to the agent from the chat. With context, the active file and its
   * selection go with it. opts.fresh starts a new conversation first (code actions).
   */
  async send(text: string, opts: { context?: boolean; fresh?: boolean; uri?: string; range?: unknown; diagnostic?: unknown } = {}): Promise<PromptResult | undefined> {
    text = text.trim();
    if (text === '') {
      return undefined;
    }
    if (this.running) {
      void vscode.window.showWarningMessage('agentls: a prompt is running in the chat; wait for it or cancel it.');
      return undefined;
    }
    if (opts.fresh) {
      this.transcript = new Transcript();
      this.postAll();
    }
    const t = this.transcript;
    const params: PromptParams = { prompt: text };
    let contextLabel: string | undefined;
    if (opts.uri) {
      params.uri = opts.uri;
      if (opts.range) {
        params.range = opts.range;
      }
      if (opts.diagnostic) {
        params.diagnostic = opts.diagnostic;
      }
      contextLabel = vscode.workspace.asRelativePath(vscode.Uri.parse(opts.uri));
    } else if (opts.context !== false && this.contextEnabled) {
      const ctx = this.editorContext();
      if (ctx) {
        params.uri = ctx.uri;
        if (ctx.range) {
          params.range = ctx.range;
        }
        // The diagnostics of the selected lines (else the cursor's line) go with it.
        const ed = vscode.window.activeTextEditor;
        if (ed && ed.document.uri.toString() === ctx.uri) {
          const diag = atLines(ed.document.uri, ed.selection.start.line, ed.selection.end.line);
          if (diag) {
            params.diagnostic = diag;
          }
        }
        contextLabel = ctx.label;
      }
    }
    const mentions = parseMentions(text);
    if (mentions.length > 0) {
      const files = await Promise.all(mentions.map((m) => this.readMention(m.path)));
      params.prompt = withAttachments(text, files);
      const names = mentions.map((m) => m.path).join(', ');
      contextLabel = contextLabel ? `${contextLabel}; ${names}` : names;
    }
    if (t.session) {
      params.session = t.session;
    } else {
      this.unbound = t;
    }
    this.mark(t.addUser(text, contextLabel));
    const run: Running = { transcript: t, cts: new vscode.CancellationTokenSource(), cancelled: false };
    this.running = run;
    this.postState();
    this.changed.fire();
    const started = Date.now();
    try {
      const res = await this.server.request<PromptResult>('agentls/prompt', params, run.cts.token);
      if (res && typeof res.session === 'string' && res.session !== '') {
        this.bind(t, res.session);
      }
      this.log(`prompt ${res.session}: ${res.stopReason} in ${Date.now() - started} ms`);
      this.mark(t.end(res.stopReason, res.usage, res.error?.message));
      return res;
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      this.mark(t.addNote(run.cancelled ? 'cancelled' : `The prompt failed: ${msg}`, run.cancelled ? 'warning' : 'error'));
      if (!run.cancelled) {
        void vscode.window.showErrorMessage(`agentls: the prompt failed: ${msg}`, 'Show Log').then((p) => {
          if (p) {
            void vscode.commands.executeCommand('agentls.showLog');
          }
        });
      }
      return undefined;
    } finally {
      if (this.unbound === t) {
        this.unbound = undefined;
      }
      // Calls the turn left open (the server went away) are not running any more.
      for (const tool of t.openTools()) {
        if (!this.server.running) {
          tool.status = 'cancelled';
          this.markTool(t, tool);
        }
      }
      run.cts.dispose();
      this.running = undefined;
      this.flush();
      this.postState();
      this.changed.fire();
    }
  }

  /** Cancels the running prompt: agentls/cancel for its session, $/cancelRequest after a grace period. */
  cancel(): boolean {
    const run = this.running;
    if (!run) {
      return false;
    }
    run.cancelled = true;
    if (run.transcript.session) {
      this.server.notify('agentls/cancel', { session: run.transcript.session });
      setTimeout(() => {
        if (this.running === run) {
          run.cts.cancel();
        }
      }, 3000);
    } else {
      // The session is not known yet: cancelling the request cancels the prompt.
      run.cts.cancel();
    }
    return true;
  }

  /** An agentls/update notification. */
  update(params: { session: string; update: Record<string, unknown> }): void {
    const session = params?.session;
    const u = params?.update;
    if (typeof session !== 'string' || !u || typeof u !== 'object') {
      return;
    }
    if (session === '' || session === editorSession) {
      return;
    }
    let t = this.bySession.get(session);
    if (!t && this.unbound) {
      t = this.unbound;
      this.bind(t, session);
    }
    if (!t) {
      return;
    }
    const changed = t.apply(u);
    if (t === this.transcript) {
      for (const i of changed) {
        this.dirty.add(i);
      }
      this.scheduleFlush();
    }
    if (u.kind === 'tool_call' || (u.kind === 'tool_call_update' && typeof u.status === 'string')) {
      this.changed.fire();
    }
  }

  private bind(t: Transcript, session: string): void {
    t.session = session;
    this.bySession.set(session, t);
    if (this.unbound === t) {
      this.unbound = undefined;
    }
    if (this.running?.transcript === t && this.running.cancelled) {
      // Cancelled before the session was known.
      this.server.notify('agentls/cancel', { session });
    }
  }

  private editorContext(): { uri: string; range?: unknown; label: string } | undefined {
    const e = this.lastEditor;
    if (!e || e.document.isClosed || e.document.uri.scheme !== 'file') {
      return undefined;
    }
    const rel = vscode.workspace.asRelativePath(e.document.uri);
    const sel = e.selection;
    if (sel.isEmpty) {
      return { uri: e.document.uri.toString(), label: rel };
    }
    const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line - 1 : sel.end.line;
    const lines = endLine > sel.start.line ? `${sel.start.line + 1}-${endLine + 1}` : `${sel.start.line + 1}`;
    return {
      uri: e.document.uri.toString(),
      range: {
        start: { line: sel.start.line, character: sel.start.character },
        end: { line: sel.end.line, character: sel.end.character },
      },
      label: `${rel}:${lines}`,
    };
  }

  private async readMention(p: string): Promise<{ path: string; text?: string; error?: string }> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const candidates = path.isAbsolute(p) ? [vscode.Uri.file(p)] : folders.map((f) => vscode.Uri.joinPath(f.uri, p));
    for (const uri of candidates) {
      if (!folders.some((f) => uri.fsPath === f.uri.fsPath || uri.fsPath.startsWith(f.uri.fsPath + path.sep))) {
        continue;
      }
      try {
        const doc = await vscode.workspace.openTextDocument(uri);
        return { path: uri.fsPath, text: doc.getText() };
      } catch {
        // try the next folder
      }
    }
    return { path: p, error: 'not a readable file of the workspace' };
  }

  private async files(): Promise<string[]> {
    if (!this.fileList) {
      const found = await vscode.workspace.findFiles('**/*', '{**/node_modules/**,**/.git/**}', 5000);
      this.fileList = found.map((u) => vscode.workspace.asRelativePath(u, false)).sort();
    }
    return this.fileList;
  }

  private async onMessage(m: { type: string; [k: string]: unknown }): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.postAll();
        break;
      case 'send':
        await this.send(String(m.text ?? ''), { context: m.useContext !== false });
        break;
      case 'cancel':
        this.cancel();
        break;
      case 'newChat':
        this.newChat();
        break;
      case 'sessions':
        await vscode.commands.executeCommand('agentls.resumeSession');
        break;
      case 'toggleContext':
        this.contextEnabled = !this.contextEnabled;
        this.postState();
        break;
      case 'open': {
        const uri = vscode.Uri.parse(String(m.uri));
        const line = typeof m.line === 'number' ? m.line : undefined;
        const opts: vscode.TextDocumentShowOptions = { preview: true, viewColumn: vscode.ViewColumn.One };
        if (line !== undefined) {
          opts.selection = new vscode.Range(line, 0, line, 0);
        }
        await vscode.window.showTextDocument(uri, opts);
        break;
      }
      case 'link': {
        const href = String(m.href ?? '');
        if (/^https?:/.test(href)) {
          await vscode.env.openExternal(vscode.Uri.parse(href));
        } else if (href.startsWith('file:')) {
          await vscode.window.showTextDocument(vscode.Uri.parse(href), { preview: true });
        }
        break;
      }
      case 'confirm':
        this.confirmations.answer(String(m.id), String(m.choice));
        break;
      case 'review':
        await this.confirmations.review(String(m.id));
        break;
      case 'commands': {
        // Custom commands (agentls.listPrompts' entries with a command): the line goes
        // to agentls as typed, which expands it.
        let list: PromptEntry[] = [];
        try {
          list = (await this.server.request<PromptEntry[]>('workspace/executeCommand', { command: 'agentls.listPrompts', arguments: [{}] })) ?? [];
        } catch (err) {
          this.log(`listing the commands: ${err instanceof Error ? err.message : String(err)}`);
        }
        const files = commandSuggestions(list, String(m.query ?? '')).map((c) => ({ path: c.command, detail: c.description, insert: c.command, icon: 'symbol-event' }));
        void this.view?.webview.postMessage({ type: 'files', query: m.query, files });
        break;
      }
      case 'files': {
        const q = String(m.query ?? '').toLowerCase();
        const all = await this.files();
        const hits = all.filter((f) => f.toLowerCase().includes(q)).slice(0, 30);
        void this.view?.webview.postMessage({ type: 'files', query: m.query, files: hits.map((f) => ({ path: f, insert: mentionFor(f) })) });
        break;
      }
      default:
        break;
    }
  }

  private mark(indexes: number[]): void {
    for (const i of indexes) {
      this.dirty.add(i);
    }
    this.scheduleFlush();
  }

  private markTool(t: Transcript, tool: ToolItem): void {
    const i = t.toolIndex(tool.id);
    if (i !== undefined && t === this.transcript) {
      this.dirty.add(i);
    }
  }

  private scheduleFlush(): void {
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => this.flush(), 40);
    }
  }

  private flush(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    const indexes = [...this.dirty].sort((a, b) => a - b);
    this.dirty.clear();
    if (!this.view) {
      return;
    }
    for (const i of indexes) {
      const item = this.transcript.items[i];
      if (item) {
        void this.view.webview.postMessage({ type: 'item', index: i, item: this.render(item) });
      }
    }
  }

  private postAll(): void {
    this.dirty.clear();
    if (!this.view) {
      return;
    }
    void this.view.webview.postMessage({
      type: 'reset',
      title: this.transcript.title,
      session: this.transcript.session,
      items: this.transcript.items.map((it) => this.render(it)),
    });
    this.postState();
  }

  private postState(): void {
    if (!this.view) {
      return;
    }
    const ctx = this.editorContext();
    void this.view.webview.postMessage({
      type: 'state',
      running: this.running !== undefined,
      session: this.transcript.session,
      context: ctx ? { label: ctx.label, enabled: this.contextEnabled } : null,
    });
  }

  private roots(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  }

  private render(item: ChatItem): Record<string, unknown> {
    switch (item.kind) {
      case 'message':
        return { kind: 'message', html: this.md.render(item.text) };
      case 'thought':
        return {
          kind: 'thought',
          html: this.md.render(item.text),
          hidden: !vscode.workspace.getConfiguration('agentls').get('chat.showThoughts', true),
        };
      case 'user':
        return { kind: 'user', text: item.text, context: item.context };
      case 'plan':
        return { kind: 'plan', entries: item.entries };
      case 'note':
        return { kind: 'note', text: item.text, level: item.level };
      case 'tool': {
        const pending = this.confirmations.byToolCall(item.id);
        const roots = this.roots();
        return {
          kind: 'tool',
          id: item.id,
          name: item.name,
          title: item.title,
          toolKind: item.toolKind,
          status: item.status,
          final: isFinal(item.status),
          command: item.command,
          locations: item.locations.map((l) => ({ uri: l.uri, line: l.range?.start?.line, label: locationLabel(l, roots) })),
          output: item.output,
          outputTruncated: item.outputTruncated,
          text: item.diff || item.questions ? undefined : item.text,
          questions: item.questions,
          answers: item.questions && item.text && item.status === 'completed' ? plainAnswers(item.text) : undefined,
          diff: item.diff?.diff,
          error: item.error,
          confirm: pending
            ? {
                id: pending.details.id,
                type: pending.details.type,
                question: question(pending.details),
                note: alwaysNote(pending.details),
                choices: choices(pending.details).map((c) => ({ id: c.id, label: c.label, outcome: c.outcome, reject: c.reject })),
              }
            : undefined,
        };
      }
    }
  }

  private html(webview: vscode.Webview, media: vscode.Uri, codicons: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const css = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css'));
    const js = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js'));
    const icons = webview.asWebviewUri(vscode.Uri.joinPath(codicons, 'codicon.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} https: data:`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${icons}" rel="stylesheet">
<link href="${css}" rel="stylesheet">
<title>agentls</title>
</head>
<body>
<main id="log" aria-live="polite"></main>
<div id="empty" class="empty">
  <div class="codicon codicon-hubot big"></div>
  <p>Ask agentls to read, change or run something in this workspace.</p>
  <p class="hint">The active file and selection go with the prompt; <code>#file:path</code> attaches a file. Edits open in a diff for review.</p>
</div>
<footer>
  <div id="files" class="files" hidden></div>
  <div id="context" class="context" hidden>
    <button id="context-chip" class="chip" title="Sent with the prompt as context; click to leave it out"><span class="codicon codicon-file"></span><span id="context-label"></span></button>
  </div>
  <div class="input">
    <textarea id="prompt" rows="3" placeholder="Ask agentls… (Enter to send, Shift+Enter for a new line, # to mention a file)" aria-label="Prompt"></textarea>
    <div class="buttons">
      <button id="send" class="icon" title="Send (Enter)" aria-label="Send"><span class="codicon codicon-send"></span></button>
      <button id="cancel" class="icon" title="Cancel" aria-label="Cancel" hidden><span class="codicon codicon-debug-stop"></span></button>
    </div>
  </div>
</footer>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
  }
}

function fileEditor(e: vscode.TextEditor | undefined): vscode.TextEditor | undefined {
  return e && e.document.uri.scheme === 'file' ? e : undefined;
}
