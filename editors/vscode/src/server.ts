// The agentls language server: started through vscode-languageclient as `agentls serve`
// over stdio, declaring the rich-client capability (experimental.agentls), with the
// settings as initializationOptions and on change. Approved edits arrive as
// workspace/applyEdit (applied by the client through the workspace edit API, one undo
// step per call) and are saved afterwards when agentls.saveAfterEdit is on.
import * as vscode from 'vscode';
import {
  CancellationToken,
  DidChangeConfigurationNotification,
  ExecuteCommandSignature,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  StaticFeature,
} from 'vscode-languageclient/node';
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, ClientCapabilities, InitializeResult } from 'vscode-languageclient';
import { CollectParams, collect, diagnosticsCapability } from './diagnostics';
import { ExtensionSettings, needsRestart, serverCommand, serverEnv, serverSettings } from './logic/settings';

/** The protocol version this extension speaks (docs/protocol.md). */
export const protocolVersion = 1;

export function readSettings(): ExtensionSettings {
  const c = vscode.workspace.getConfiguration('agentls');
  return {
    path: c.get('path'),
    approvalMode: c.get('approvalMode'),
    model: c.get('model'),
    provider: c.get('provider'),
    mcpServers: c.get('mcpServers'),
    settings: c.get('settings'),
    env: c.get('env'),
    logFile: c.get('logFile'),
  };
}

class AgentlsFeature implements StaticFeature {
  serverProtocol: number | undefined;
  getState(): FeatureState {
    return { kind: 'static' };
  }
  fillClientCapabilities(caps: ClientCapabilities): void {
    // askUser: ask_user's questions (and MCP servers' forms) come as agentls/confirm of
    // type ask_user, answered in the quick input (./confirm).
    // diagnostics: the editor's diagnostics of what the agent changed (./diagnostics).
    const diagnostics = diagnosticsCapability();
    caps.experimental = {
      ...((caps.experimental as object) ?? {}),
      agentls: { confirm: true, updates: true, askUser: true, ...(diagnostics ? { diagnostics } : {}) },
    };
  }
  initialize(caps: InitializeResult['capabilities']): void {
    const exp = (caps.experimental as { agentls?: { protocolVersion?: number } } | undefined)?.agentls;
    this.serverProtocol = exp?.protocolVersion;
  }
  clear(): void {
    this.serverProtocol = undefined;
  }
}

export interface ServerHooks {
  onConfirm(params: unknown, token: vscode.CancellationToken): Promise<unknown>;
  onUpdate(params: { session: string; update: Record<string, unknown> }): void;
  /** A command the server's code actions run ("Ask agentls to fix this"). */
  onCommand(command: string, args: unknown[], next: ExecuteCommandSignature): vscode.ProviderResult<unknown>;
  onState(state: 'starting' | 'running' | 'stopped' | 'error', error?: string): void;
  /** The running server was sent changed settings (without a restart). */
  onConfigured?(): void;
}

export class Server implements vscode.Disposable {
  client: LanguageClient | undefined;
  private settings: ExtensionSettings = readSettings();
  private disposables: vscode.Disposable[] = [];
  private starting: Promise<void> | undefined;
  readyAt: number | undefined;
  firstReadyAt: number | undefined;
  startedAt: number | undefined;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly hooks: ServerHooks,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('agentls')) {
          void this.configurationChanged();
        }
      }),
    );
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
    void this.stop();
  }

  get running(): boolean {
    return this.client !== undefined && this.client.state === State.Running;
  }

  start(): Promise<void> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    if (!vscode.workspace.workspaceFolders || vscode.workspace.workspaceFolders.length === 0) {
      this.hooks.onState('stopped', 'Open a folder: agentls works on the files of a workspace folder.');
      return;
    }
    this.settings = readSettings();
    const { command, args } = serverCommand(this.settings);
    const serverOptions: ServerOptions = {
      command,
      args,
      // No `transport`: with TransportKind.stdio the client would add --stdio, which
      // agentls does not take; stdio is what it speaks anyway.
      options: { env: serverEnv(process.env, this.settings), cwd: vscode.workspace.workspaceFolders[0].uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: serverSettings(this.settings),
      // A failed start is reported here, with a way to fix it, not by the client.
      initializationFailedHandler: (err) => {
        this.output.appendLine(`agentls: initialize failed: ${String(err)}`);
        return false;
      },
      middleware: {
        executeCommand: (cmd, cmdArgs, next) => this.hooks.onCommand(cmd, cmdArgs, next),
        workspace: {
          handleApplyEdit: async (params, next) => this.applyEdit(params, (p) => Promise.resolve(next(p, CancellationToken.None)) as Promise<ApplyWorkspaceEditResult>),
        },
      },
    };
    const client = new LanguageClient('agentls', 'agentls', serverOptions, clientOptions);
    const feature = new AgentlsFeature();
    client.registerFeature(feature);
    client.onRequest('agentls/confirm', (params: unknown, token: vscode.CancellationToken) => this.hooks.onConfirm(params, token));
    client.onNotification('agentls/collectDiagnostics', (params: CollectParams) => {
      try {
        collect(params, (report) => void client.sendNotification('agentls/diagnostics', report));
      } catch (err) {
        this.output.appendLine(`agentls: diagnostics not reported: ${String(err)}`);
      }
    });
    client.onNotification('agentls/update', (params: { session: string; update: Record<string, unknown> }) => {
      try {
        this.hooks.onUpdate(params);
      } catch (err) {
        this.output.appendLine(`agentls: update not shown: ${String(err)}`);
      }
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client) {
        this.hooks.onState('stopped');
      }
    });
    this.client = client;
    this.hooks.onState('starting');
    this.startedAt = Date.now();
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      const msg = startError(command, err);
      this.output.appendLine(`agentls: ${msg}`);
      this.hooks.onState('error', msg);
      void vscode.window.showErrorMessage(`agentls: ${msg}`, 'Open Settings', 'Show Log').then((pick) => {
        if (pick === 'Open Settings') {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.path');
        } else if (pick === 'Show Log') {
          this.output.show();
        }
      });
      try {
        await client.dispose();
      } catch {
        // already down
      }
      return;
    }
    this.readyAt = Date.now();
    this.firstReadyAt ??= this.readyAt;
    this.output.appendLine(`agentls: server ready in ${this.readyAt - this.startedAt} ms (${command} ${args.join(' ')})`);
    if (feature.serverProtocol !== protocolVersion) {
      void vscode.window.showWarningMessage(
        `agentls: the server speaks protocol ${String(feature.serverProtocol)}, this extension ${protocolVersion}; some features may not work.`,
      );
    }
    this.hooks.onState('running');
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(3000);
      } catch (err) {
        this.output.appendLine(`agentls: stopping the server: ${String(err)}`);
      }
    }
    this.hooks.onState('stopped');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private async configurationChanged(): Promise<void> {
    const before = this.settings;
    const after = readSettings();
    this.settings = after;
    if (!this.client) {
      return;
    }
    if (needsRestart(before, after)) {
      this.output.appendLine('agentls: the server command or environment changed: restarting');
      await this.restart();
      return;
    }
    const settings = serverSettings(after) ?? {};
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings });
    this.hooks.onConfigured?.();
  }

  /** Sends a request once the server runs (starting it if needed). */
  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    await this.start();
    if (!this.client || !this.running) {
      throw new Error('the agentls server is not running (see "agentls: Show Server Log")');
    }
    // An explicit `undefined` token would be sent as a second parameter.
    return token ? this.client.sendRequest<R>(method, params, token) : this.client.sendRequest<R>(method, params);
  }

  notify(method: string, params: unknown): void {
    if (this.client && this.running) {
      void this.client.sendNotification(method, params);
    }
  }

  /** workspace/applyEdit: applied by the client, then the touched files saved. */
  private async applyEdit(
    params: ApplyWorkspaceEditParams,
    next: (p: ApplyWorkspaceEditParams) => Promise<ApplyWorkspaceEditResult>,
  ): Promise<ApplyWorkspaceEditResult> {
    const res = await next(params);
    const label = params.label ?? 'agentls edit';
    if (!res.applied) {
      const reason = res.failureReason ?? 'the document changed in the editor since the edit was computed (version mismatch)';
      this.output.appendLine(`agentls: edit not applied (${label}): ${reason}`);
      return { applied: false, failureReason: reason };
    }
    this.output.appendLine(`agentls: applied ${label}`);
    if (vscode.workspace.getConfiguration('agentls').get<boolean>('saveAfterEdit', true)) {
      for (const uri of touchedUris(params)) {
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        if (doc && doc.isDirty) {
          const ok = await doc.save();
          if (!ok) {
            void vscode.window.showWarningMessage(`agentls: the edit was applied but ${vscode.workspace.asRelativePath(uri)} could not be saved.`);
          }
        }
      }
    }
    return res;
  }
}

function touchedUris(params: ApplyWorkspaceEditParams): vscode.Uri[] {
  const out = new Map<string, vscode.Uri>();
  const add = (u: string | undefined) => {
    if (u) {
      const uri = vscode.Uri.parse(u);
      out.set(uri.toString(), uri);
    }
  };
  for (const c of params.edit.documentChanges ?? []) {
    if ('textDocument' in c) {
      add(c.textDocument.uri);
    } else if (c.kind === 'create') {
      add(c.uri);
    } else if (c.kind === 'rename') {
      add(c.newUri);
    }
  }
  for (const u of Object.keys(params.edit.changes ?? {})) {
    add(u);
  }
  return [...out.values()];
}

function startError(command: string, err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  if (/ENOENT/.test(text)) {
    return `could not start "${command}": not found. Install agentls (go build -o ~/.local/bin/agentls ./cmd/agentls) or set agentls.path.`;
  }
  return `the server failed to start: ${text}`;
}
