// The status-bar item's text: the server's state, the approval mode and the model. No
// vscode import.

export type ServerState = 'starting' | 'idle' | 'working' | 'waiting' | 'stopped' | 'error';

export interface StatusInput {
  state: ServerState;
  mode: string;
  model: string;
  /** Confirmations waiting for the user. */
  waiting: number;
  /** Prompts and tool calls running. */
  running: number;
  error?: string;
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
  const text = `${icons[state]} agentls: ${word} · ${s.mode} · ${s.model}`;
  const lines = [`agentls is ${word}`, `Approval mode: ${s.mode}`, `Model: ${s.model}`];
  if (s.error) {
    lines.push('', s.error);
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
