// agentls for VS Code: starts the agentls language server, and puts the agent into VS
// Code's own UI — the chat in the side bar, edit consent in the diff editor, shell
// consent as a notification, live tool output, the state in the status bar.
import * as vscode from 'vscode';
import { Chat, editorSession } from './chat';
import { Confirmations } from './confirm';
import { ConfirmDetails } from './logic/confirm';
import { approvalModes, isApprovalMode, modeDescriptions, modelLabel } from './logic/settings';
import { modeOf, SandboxInfo, sandboxOf, ServerState, sessionInfo, statusView } from './logic/status';
import { readSettings, Server } from './server';
import { ToolTerminal } from './toolTerminal';
import { TurnBack, TurnDiff } from './logic/turns';
import { TurnCommands } from './turns';

interface SessionInfo {
  id: string;
  title?: string;
  created?: string;
  updated?: string;
  prompts?: number;
}

interface ToolInfo {
  name: string;
  displayName?: string;
  description?: string;
  kind?: string;
  source?: string;
}

/** What the extension exports to other extensions (and its end-to-end tests). */
export interface AgentlsApi {
  state(): {
    server: ServerState;
    mode: string;
    waiting: number;
    running: number;
    status: string;
    /** The status bar item's tooltip. */
    tooltip: string;
    /** How the server contains shell commands (agentls.status), once it said. */
    sandbox: SandboxInfo | undefined;
    model: { model: string; provider?: string } | undefined;
    mcp: { name: string; state: string; tools: number; error?: string }[];
    readyMs: number | undefined;
    chat: ReturnType<Chat['state']>;
    /** hunks: the summary of an edit's per-hunk answers, when it has hunks to decide. */
    confirmations: { id: string; type: string; toolCallId?: string; hunks?: string }[];
    /** How many confirmations were asked since activation. */
    asked: number;
    /** The last results of the turn commands, and the last message they showed. */
    turns: { diff?: TurnDiff; undo?: TurnBack; redo?: TurnBack; message?: string };
  };
  prompt(text: string): Promise<unknown>;
}

export function activate(context: vscode.ExtensionContext): AgentlsApi {
  const activatedAt = Date.now();
  const output = vscode.window.createOutputChannel('agentls', { log: true });
  const log = (msg: string) => output.info(msg);
  const terminal = new ToolTerminal();
  const confirmations = new Confirmations(log);
  const statusItem = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 10);
  statusItem.name = 'agentls';
  statusItem.command = 'agentls.menu';

  let serverState: ServerState = 'starting';
  let serverError: string | undefined;
  // The approval mode: the server's (agentls/update kind current_mode_update) once it said it; what the
  // settings ask for until then. A session may have a mode of its own.
  let mode: string = readSettings().approvalMode as string;
  const sessionModes = new Map<string, string>();
  // A mode this window asked for: its announcement is expected, not news.
  let askedMode: string | undefined;
  // Whether the running server said its mode yet: the first time is no change.
  let modeKnown = false;
  // The model the server named for each session (session_info), and the last named.
  const models = new Map<string, { model: string; provider?: string }>();
  let lastModel: { model: string; provider?: string } | undefined;
  // The MCP servers of the settings in force, as the server reports them (mcp_status).
  const mcpServers = new Map<string, { name: string; state: string; tools: number; error?: string }>();
  const runningCalls = new Set<string>();
  const callTitles = new Map<string, string>();
  // How the running server contains shell commands (agentls.status's sandbox).
  let sandbox: SandboxInfo | undefined;

  // eslint-disable-next-line prefer-const
  let chat: Chat;
  const server = new Server(output, {
    onConfirm: (params, token) => confirmations.ask(params as ConfirmDetails, token),
    onUpdate: (params) => {
      const u = params.update;
      if (u && (u.kind === 'tool_call' || u.kind === 'tool_call_update')) {
        trackCall(params.session, u);
      }
      if (u && typeof u === 'object') {
        serverStatus(params.session, u);
      }
      chat.update(params);
    },
    onCommand: (command, args, next) => {
      // The server's own code actions ("Ask agentls to fix this", "Run agentls
      // instruction") run agentls.prompt: shown in the chat like any prompt.
      if (command === 'agentls.prompt' && args.length > 0 && typeof args[0] === 'object' && args[0] !== null) {
        const a = args[0] as { prompt?: string; uri?: string; range?: unknown; diagnostic?: unknown };
        if (typeof a.prompt === 'string') {
          void chat.reveal();
          return chat.send(a.prompt, { fresh: !chat.busy, uri: a.uri, range: a.range, diagnostic: a.diagnostic });
        }
      }
      return next(command, args);
    },
    onState: (s, err) => {
      if (s === 'starting') {
        modeKnown = false;
        mcpServers.clear();
        sandbox = undefined;
      }
      if (s === 'running') {
        void refreshSandbox();
      }
      serverState = s === 'running' ? 'idle' : s;
      serverError = err;
      if (s !== 'running') {
        confirmations.cancelAll();
        runningCalls.clear();
      }
      updateStatus();
    },
    // The settings may have changed tools.sandbox.
    onConfigured: () => void refreshSandbox(),
  });
  chat = new Chat(context.extensionUri, server, confirmations, log);
  const turns = new TurnCommands(server, () => chat.state().session, log);

  function trackCall(session: string, u: Record<string, unknown>): void {
    const id = typeof u.toolCallId === 'string' ? u.toolCallId : '';
    const status = typeof u.status === 'string' ? u.status : undefined;
    if (u.kind === 'tool_call' && typeof u.title === 'string') {
      callTitles.set(id, u.title);
    }
    if (status === 'in_progress' && !runningCalls.has(id)) {
      runningCalls.add(id);
      terminal.start(id, callTitles.get(id) ?? id);
    }
    if (typeof u.output === 'string' && u.output !== '') {
      terminal.output(id, u.output);
    }
    if (status === 'completed' || status === 'failed' || status === 'cancelled') {
      if (runningCalls.delete(id)) {
        terminal.end(id, status);
      }
      callTitles.delete(id);
      if (session === editorSession && status !== 'completed') {
        log(`${id}: ${status}`);
      }
    }
    updateStatus();
  }

  /** Takes what the server reports of its state: the approval mode and the model. */
  function serverStatus(session: string, u: Record<string, unknown>): void {
    const m = modeOf(u);
    if (m !== undefined) {
      if (session !== '') {
        sessionModes.set(session, m);
      } else if (!modeKnown) {
        modeKnown = true;
        askedMode = undefined;
        mode = m;
      } else if (m !== mode || askedMode !== undefined) {
        const asked = askedMode === m;
        askedMode = undefined;
        const changed = m !== mode;
        mode = m;
        if (changed) {
          log(`approval mode: ${m}${asked ? '' : ' (changed on the server)'}`);
          if (!asked) {
            // Someone else changed what agentls may do without asking: say so.
            void vscode.window.showInformationMessage(`agentls: the approval mode is now ${m}: ${modeDescriptions[m as keyof typeof modeDescriptions] ?? ''}`);
          }
        }
      }
      updateStatus();
      return;
    }
    if (u.kind === 'mcp_status' && u.server && typeof u.server === 'object') {
      const st = u.server as { name?: unknown; state?: unknown; tools?: unknown; error?: unknown };
      if (typeof st.name === 'string' && typeof st.state === 'string') {
        mcpServers.set(st.name, {
          name: st.name,
          state: st.state,
          tools: typeof st.tools === 'number' ? st.tools : 0,
          error: typeof st.error === 'string' ? st.error : undefined,
        });
      }
      return;
    }
    const info = sessionInfo(u);
    if (info) {
      models.set(session, info);
      lastModel = info;
      updateStatus();
    }
  }

  /** Asks the server how it contains shell commands, for the status bar. */
  async function refreshSandbox(): Promise<void> {
    try {
      const st = await server.request<unknown>('workspace/executeCommand', { command: 'agentls.status', arguments: [{}] });
      sandbox = sandboxOf(st);
      if (sandbox) {
        log(`shell commands: ${sandbox.summary}`);
      }
    } catch (err) {
      log(`agentls.status: ${errText(err)}`);
    }
    updateStatus();
  }

  function updateStatus(): void {
    const running = runningCalls.size + (chat?.busy ? 1 : 0);
    const current = chat?.state().session;
    const shownMode = (current !== undefined ? sessionModes.get(current) : undefined) ?? mode;
    const info = (current !== undefined ? models.get(current) : undefined) ?? lastModel;
    const view = statusView({
      state: serverState,
      mode: isApprovalMode(shownMode) ? shownMode : 'default',
      model: info?.model ?? modelLabel(readSettings()),
      provider: info?.provider,
      modelReported: info !== undefined,
      waiting: confirmations.list().length,
      running,
      error: serverError,
      sandbox,
    });
    statusItem.text = view.text;
    statusItem.tooltip = view.tooltip;
    statusItem.backgroundColor = view.background ? new vscode.ThemeColor(view.background) : undefined;
    statusItem.show();
    void vscode.commands.executeCommand('setContext', 'agentls.busy', running > 0);
  }

  context.subscriptions.push(
    output,
    terminal,
    confirmations,
    statusItem,
    server,
    chat,
    turns,
    vscode.window.registerWebviewViewProvider(Chat.viewId, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    confirmations.onDidChange(updateStatus),
    chat.onDidChange(updateStatus),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentls.approvalMode')) {
        // The server announces the mode it takes from the new settings.
        askedMode = readSettings().approvalMode as string;
      }
      if (e.affectsConfiguration('agentls')) {
        updateStatus();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (!server.client) {
        void server.start();
      }
    }),
  );

  const cmd = (id: string, fn: (...args: any[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  cmd('agentls.openChat', () => chat.reveal());
  cmd('agentls.newChat', async () => {
    chat.newChat();
    await chat.reveal();
  });
  cmd('agentls.ask', async (text?: string) => {
    const prompt =
      typeof text === 'string'
        ? text
        : await vscode.window.showInputBox({
            title: 'Ask agentls',
            prompt: 'The active file and selection go with the prompt; #file:path attaches a file.',
            placeHolder: 'e.g. explain this function, or fix the failing test',
            ignoreFocusOut: true,
          });
    if (!prompt) {
      return undefined;
    }
    await chat.reveal();
    return chat.send(prompt, { context: true });
  });
  cmd('agentls.askSelection', async () => {
    const prompt = await vscode.window.showInputBox({
      title: 'Ask agentls about the selection',
      placeHolder: 'e.g. explain this, or make it faster',
      ignoreFocusOut: true,
    });
    if (!prompt) {
      return undefined;
    }
    await chat.reveal();
    return chat.send(prompt, { context: true });
  });
  cmd('agentls.stop', async () => {
    const cancelled = chat.cancel();
    if (runningCalls.size > 0 || !cancelled) {
      // Calls started from the editor, and whatever else the server runs.
      try {
        await server.request('workspace/executeCommand', { command: 'agentls.cancel', arguments: [{}] });
      } catch (err) {
        log(`cancel: ${String(err)}`);
      }
    }
  });
  cmd('agentls.resumeSession', async () => {
    let sessions: SessionInfo[];
    try {
      sessions = (await server.request<SessionInfo[]>('agentls/sessions', {})) ?? [];
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: listing the sessions failed: ${errText(err)}`);
      return;
    }
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage('agentls: there are no stored sessions yet.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      sessions.map((s) => ({
        label: s.title && s.title !== '' ? s.title : s.id,
        description: `${s.prompts ?? 0} prompt${s.prompts === 1 ? '' : 's'}`,
        detail: s.updated ? `updated ${s.updated.slice(0, 16).replace('T', ' ')} · ${s.id}` : s.id,
        session: s,
      })),
      { title: 'agentls: resume a session', placeHolder: 'The chat continues the session you pick', matchOnDetail: true },
    );
    if (pick) {
      await chat.resume(pick.session.id, pick.session.title);
      await chat.reveal();
    }
  });
  cmd('agentls.setMode', async (m?: string) => {
    let chosen = m;
    if (!chosen) {
      const pick = await vscode.window.showQuickPick(
        approvalModes.map((x) => ({ label: x, description: x === mode ? '(current)' : '', detail: modeDescriptions[x] })),
        { title: 'agentls: approval mode', placeHolder: 'When agentls asks before a tool call runs' },
      );
      chosen = pick?.label;
    }
    if (!chosen) {
      return;
    }
    if (!isApprovalMode(chosen)) {
      void vscode.window.showErrorMessage(`agentls: unknown approval mode ${chosen}`);
      return;
    }
    try {
      askedMode = chosen;
      await server.request('workspace/executeCommand', { command: 'agentls.setApprovalMode', arguments: [{ mode: chosen }] });
      mode = chosen;
      updateStatus();
      void vscode.window.setStatusBarMessage(`agentls: approval mode ${chosen}`, 3000);
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: setting the approval mode failed: ${errText(err)}`);
    }
  });
  cmd('agentls.runToolPick', async () => {
    let tools: ToolInfo[];
    try {
      tools = (await server.request<ToolInfo[]>('agentls/tools', {})) ?? [];
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: listing the tools failed: ${errText(err)}`);
      return;
    }
    const pick = await vscode.window.showQuickPick(
      tools.map((t) => ({ label: t.name, description: [t.kind, t.source].filter(Boolean).join(' · '), detail: t.description })),
      { title: 'agentls: run a tool', matchOnDescription: true },
    );
    if (!pick) {
      return;
    }
    const json = await vscode.window.showInputBox({
      title: `agentls: arguments of ${pick.label}`,
      prompt: 'A JSON object',
      value: '{}',
      ignoreFocusOut: true,
      validateInput: (v) => {
        try {
          const o = JSON.parse(v);
          return typeof o === 'object' && o !== null && !Array.isArray(o) ? undefined : 'want a JSON object';
        } catch (e) {
          return String(e);
        }
      },
    });
    if (json === undefined) {
      return;
    }
    const res = await server.request<{ status: string; summary?: string; output?: string; error?: { message?: string } }>(
      'agentls/runTool',
      { name: pick.label, args: JSON.parse(json) },
    );
    output.appendLine(`--- ${pick.label} ${res.status}${res.summary ? ': ' + res.summary : ''}\n${res.output ?? ''}`);
    const text = res.summary ?? res.error?.message ?? (res.output ?? '').split('\n')[0];
    const show = res.status === 'success' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(`agentls: ${pick.label} ${res.status}: ${text}`, 'Show Output').then((p) => {
      if (p) {
        output.show(true);
      }
    });
  });
  cmd('agentls.showLog', () => output.show(true));
  cmd('agentls.showToolOutput', () => terminal.show());
  cmd('agentls.restartServer', () => server.restart());
  cmd('agentls.trustFolder', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Trust this folder', detail: folder?.uri.fsPath, scope: 'folder' },
        { label: 'Trust the parent folder and everything under it', scope: 'parent' },
        { label: 'Revoke trust', scope: 'revoke' },
      ],
      { title: "agentls: trust this folder? Its settings may then loosen consent and start the folder's tools." },
    );
    if (!pick) {
      return;
    }
    try {
      const res = await server.request<{ message?: string }>('workspace/executeCommand', {
        command: 'agentls.trust',
        arguments: [{ scope: pick.scope }],
      });
      void vscode.window.showInformationMessage(`agentls: ${res?.message ?? 'done'}`);
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: trust failed: ${errText(err)}`);
    }
  });
  cmd('agentls.authorizeMcpServer', async (name?: string) => {
    let chosen = typeof name === 'string' ? name : undefined;
    if (!chosen) {
      let servers: { name: string; state: string; transport?: string; error?: string }[] = [];
      try {
        servers = await server.request('workspace/executeCommand', { command: 'agentls.mcpStatus', arguments: [{}] });
      } catch (err) {
        void vscode.window.showErrorMessage(`agentls: ${errText(err)}`);
        return;
      }
      const remote = servers.filter((s) => s.transport === 'http' || s.transport === 'sse');
      if (remote.length === 0) {
        void vscode.window.showInformationMessage('agentls: no HTTP or SSE MCP server is configured');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        remote.map((s) => ({ label: s.name, description: s.state, detail: s.error })),
        { title: 'agentls: authorize which MCP server? The authorization page opens in the browser.' },
      );
      chosen = pick?.label;
    }
    if (!chosen) {
      return;
    }
    const target = chosen;
    try {
      const st = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `agentls: authorizing ${target} in the browser…`, cancellable: true },
        (_progress, token) =>
          server.request<{ state: string }>('workspace/executeCommand', { command: 'agentls.mcpAuth', arguments: [{ server: target }] }, token),
      );
      void vscode.window.showInformationMessage(`agentls: MCP server ${target} is ${st?.state ?? 'authorized'}`);
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: authorizing ${target} failed: ${errText(err)}`);
    }
  });
  cmd('agentls.showTools', async () => {
    try {
      const res = await server.request<{ tools: ToolInfo[]; mcpServers?: { name: string; state: string; tools: number; error?: string }[] }>(
        'agentls/tools',
        { details: true },
      );
      output.appendLine('--- tools');
      for (const t of res.tools ?? []) {
        output.appendLine(`${t.name}\t${t.kind ?? ''}\t${t.source ?? ''}`);
      }
      output.appendLine('--- MCP servers');
      for (const s of res.mcpServers ?? []) {
        output.appendLine(`${s.name}\t${s.state}\t${s.tools} tools${s.error ? '\t' + s.error : ''}`);
      }
      output.show(true);
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: ${errText(err)}`);
    }
  });
  cmd('agentls.edit.accept', () => confirmations.decideCurrent('accept'));
  cmd('agentls.edit.more', () => confirmations.decideCurrent('more'));
  cmd('agentls.edit.reject', () => confirmations.decideCurrent('reject'));
  // Without arguments the hunk under the cursor; the code actions pass (id, index).
  cmd('agentls.edit.acceptHunk', (id?: unknown, index?: unknown) =>
    confirmations.decideHunk('accept', typeof id === 'string' ? id : undefined, typeof index === 'number' ? index : undefined),
  );
  cmd('agentls.edit.rejectHunk', (id?: unknown, index?: unknown) =>
    confirmations.decideHunk('reject', typeof id === 'string' ? id : undefined, typeof index === 'number' ? index : undefined),
  );
  // Not agentls.turnDiff, agentls.undoTurn, agentls.redoTurn: the server's commands,
  // which the language client registers under their own names.
  cmd('agentls.turn.showDiff', (turn?: unknown) => turns.showDiff(typeof turn === 'number' ? turn : undefined));
  cmd('agentls.turn.undo', (turn?: unknown) => turns.turnBack(false, { turn: typeof turn === 'number' ? turn : undefined }));
  cmd('agentls.turn.redo', (turn?: unknown) => turns.turnBack(true, { turn: typeof turn === 'number' ? turn : undefined }));
  cmd('agentls.menu', async () => {
    const items: (vscode.QuickPickItem & { command: string })[] = [
      { label: '$(comment-discussion) Open Chat', command: 'agentls.openChat' },
      { label: '$(sparkle) Ask agentls…', command: 'agentls.ask' },
      { label: `$(shield) Set Approval Mode… (${mode})`, command: 'agentls.setMode' },
      { label: '$(history) Resume a Session…', command: 'agentls.resumeSession' },
      { label: '$(diff) Show Turn Diff', command: 'agentls.turn.showDiff' },
      { label: '$(discard) Undo Last Turn', command: 'agentls.turn.undo' },
      { label: '$(redo) Redo Turn', command: 'agentls.turn.redo' },
      { label: '$(tools) Run a Tool…', command: 'agentls.runToolPick' },
      { label: '$(terminal) Show Tool Output in a Terminal', command: 'agentls.showToolOutput' },
      { label: '$(output) Show Server Log', command: 'agentls.showLog' },
      { label: '$(debug-restart) Restart the Server', command: 'agentls.restartServer' },
    ];
    if (chat.busy || runningCalls.size > 0) {
      items.unshift({ label: '$(debug-stop) Cancel', command: 'agentls.stop' });
    }
    const pick = await vscode.window.showQuickPick(items, { title: 'agentls' });
    if (pick) {
      await vscode.commands.executeCommand(pick.command);
    }
  });

  updateStatus();
  void server.start();

  return {
    state: () => ({
      server: serverState,
      mode,
      waiting: confirmations.list().length,
      running: runningCalls.size + (chat.busy ? 1 : 0),
      status: statusItem.text,
      tooltip: typeof statusItem.tooltip === 'string' ? statusItem.tooltip : '',
      sandbox,
      model: lastModel,
      mcp: [...mcpServers.values()],
      // From activation to the first initialized server.
      readyMs: server.firstReadyAt !== undefined ? server.firstReadyAt - activatedAt : undefined,
      chat: chat.state(),
      confirmations: confirmations.list().map((p) => ({
        id: p.details.id,
        type: p.details.type,
        toolCallId: p.details.toolCallId,
        hunks: confirmations.hunkSummary(p),
      })),
      asked: confirmations.asked,
      turns: turns.last,
    }),
    prompt: (text: string) => chat.send(text, { context: true }),
  };
}

export function deactivate(): void {
  // The subscriptions stop the server.
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
