// The status-bar item's text: the server's state, the approval mode and the model, as
// the server reports them (agentls/update kinds current_mode_update and session_info),
// and how it contains shell commands (agentls.status's sandbox). No vscode import.

export type ServerState = 'starting' | 'idle' | 'working' | 'waiting' | 'stopped' | 'error';

export interface StatusInput {
  state: ServerState;
  mode: string;
  model: string;
  /** The model's provider, when the server named the model (session_info). */
  provider?: string;
  /** Whether the server named the model; otherwise model is what the settings ask for. */
  modelReported?: boolean;
  /** Confirmations waiting for the user. */
  waiting: number;
  /** Prompts and tool calls running. */
  running: number;
  error?: string;
  /** How the server contains shell commands, once it said (agentls.status). */
  sandbox?: SandboxInfo;
}

/**
 * How the server contains the shell commands it runs: the `sandbox` of agentls.status
 * (docs/protocol.md), the part the status bar shows.
 */
export interface SandboxInfo {
  contained: boolean;
  /** "landlock+namespaces", "landlock" or "none". */
  level: string;
  /** One line: "contained (landlock+namespaces, network off)" or "not contained: …". */
  summary: string;
  reason?: string;
  network: boolean;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** A ThemeColor id for the background, for states that want attention. */
  background?: 'statusBarItem.warningBackground' | 'statusBarItem.errorBackground';
}

/** The effective state: waiting for approval beats working, which beats idle. */
export function effectiveState(s: StatusInput): ServerState {
  if (s.state === 'idle' || s.state === 'working' || s.state === 'waiting') {
    if (s.waiting > 0) {
      return 'waiting';
    }
    if (s.running > 0) {
      return 'working';
    }
    return 'idle';
  }
  return s.state;
}

const icons: Record<ServerState, string> = {
  starting: '$(loading~spin)',
  idle: '$(hubot)',
  working: '$(sync~spin)',
  waiting: '$(bell-dot)',
  stopped: '$(circle-slash)',
  error: '$(error)',
};

const words: Record<ServerState, string> = {
  starting: 'starting',
  idle: 'idle',
  working: 'working',
  waiting: 'waiting for approval',
  stopped: 'stopped',
  error: 'error',
};

export function statusView(s: StatusInput): StatusView {
  const state = effectiveState(s);
  const word = state === 'waiting' && s.waiting > 1 ? `${s.waiting} waiting for approval` : words[state];
  let text = `${icons[state]} agentls: ${word} · ${s.mode} · ${s.model}`;
  const model = s.modelReported
    ? `Model: ${s.model}${s.provider ? ` (${s.provider})` : ''}`
    : `Model: ${s.model} (the settings; the server names the model it uses with the first prompt)`;
  const lines = [`agentls is ${word}`, `Approval mode: ${s.mode}`, model];
  // What the server said of its sandbox holds while it runs; a stopped or failed server
  // runs nothing.
  const sandbox = state === 'stopped' || state === 'error' || state === 'starting' ? undefined : s.sandbox;
  if (sandbox) {
    lines.push(`Shell commands: ${sandbox.summary}`);
  }
  if (s.error) {
    lines.push('', s.error);
  }
  if (sandbox && !sandbox.contained) {
    // Never silently: commands run with the user's full rights.
    text += ' · $(warning) not contained';
  }
  lines.push('', 'Click for agentls commands');
  const view: StatusView = { text, tooltip: lines.join('\n') };
  if (state === 'waiting') {
    view.background = 'statusBarItem.warningBackground';
  } else if (state === 'error') {
    view.background = 'statusBarItem.errorBackground';
  }
  return view;
}

/** The model and provider of a session_info update; undefined when it is not one. */
export function sessionInfo(update: Record<string, unknown>): { model: string; provider?: string } | undefined {
  if (update.kind !== 'session_info' || typeof update.model !== 'string' || update.model === '') {
    return undefined;
  }
  return { model: update.model, provider: typeof update.provider === 'string' && update.provider !== '' ? update.provider : undefined };
}

/** The approval mode of a current_mode_update; undefined when it is not one. */
export function modeOf(update: Record<string, unknown>): string | undefined {
  return update.kind === 'current_mode_update' && typeof update.mode === 'string' && update.mode !== '' ? update.mode : undefined;
}

/** The sandbox of an agentls.status result; undefined when it has none (an older server). */
export function sandboxOf(status: unknown): SandboxInfo | undefined {
  if (typeof status !== 'object' || status === null) {
    return undefined;
  }
  const sb = (status as { sandbox?: unknown }).sandbox;
  if (typeof sb !== 'object' || sb === null) {
    return undefined;
  }
  const o = sb as Record<string, unknown>;
  if (typeof o.contained !== 'boolean') {
    return undefined;
  }
  const level = typeof o.level === 'string' && o.level !== '' ? o.level : o.contained ? 'landlock' : 'none';
  const reason = typeof o.reason === 'string' && o.reason !== '' ? o.reason : undefined;
  const summary =
    typeof o.summary === 'string' && o.summary !== '' ? o.summary : o.contained ? `contained (${level})` : `not contained${reason ? ': ' + reason : ''}`;
  return { contained: o.contained, level, summary, reason, network: o.network === true };
}
