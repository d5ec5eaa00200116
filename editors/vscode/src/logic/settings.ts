// The extension's settings (agentls.*) as agentls settings: what is sent as
// initializationOptions and with workspace/didChangeConfiguration. No vscode import, so
// that it is unit tested under node.

/** The approval modes of the protocol, in the order offered to the user. */
export const approvalModes = ['default', 'auto_edit', 'yolo', 'plan'] as const;
export type ApprovalMode = (typeof approvalModes)[number];

export const modeDescriptions: Record<ApprovalMode, string> = {
  default: 'edits, shell commands, web and memory calls ask first',
  auto_edit: 'edits run without asking; shell commands still ask',
  yolo: 'nothing asks (deny rules still apply)',
  plan: 'only read-only tools run',
};

export function isApprovalMode(s: unknown): s is ApprovalMode {
  return typeof s === 'string' && (approvalModes as readonly string[]).includes(s);
}

/** What the extension reads of its configuration section (agentls.*). */
export interface ExtensionSettings {
  path?: unknown;
  approvalMode?: unknown;
  model?: unknown;
  provider?: unknown;
  mcpServers?: unknown;
  settings?: unknown;
  env?: unknown;
  logFile?: unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonEmpty(v: unknown): v is Record<string, unknown> {
  return isObject(v) && Object.keys(v).length > 0;
}

/**
 * The agentls settings object for the server: agentls.settings as the base, the
 * dedicated settings (approvalMode, model, provider, mcpServers) on top where set.
 * Returns undefined when nothing is set, so that the server's own settings files rule.
 */
export function serverSettings(s: ExtensionSettings): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = isObject(s.settings) ? { ...s.settings } : {};
  // "default" is the server's default too: it is not sent, so that the user's agentls
  // settings file can still choose another mode.
  if (isApprovalMode(s.approvalMode) && s.approvalMode !== 'default') {
    out.approvalMode = s.approvalMode;
  }
  if (typeof s.model === 'string' && s.model.trim() !== '') {
    out.model = s.model.trim();
  }
  if (nonEmpty(s.provider)) {
    out.provider = s.provider;
  }
  if (nonEmpty(s.mcpServers)) {
    out.mcpServers = s.mcpServers;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The command line of the server. */
export function serverCommand(s: ExtensionSettings): { command: string; args: string[] } {
  const command = typeof s.path === 'string' && s.path.trim() !== '' ? s.path.trim() : 'agentls';
  const args = ['serve'];
  if (typeof s.logFile === 'string' && s.logFile.trim() !== '') {
    args.push('--log-file', s.logFile.trim());
  }
  return { command, args };
}

/** The server's environment: base with agentls.env's string values on top. */
export function serverEnv(base: Record<string, string | undefined>, s: ExtensionSettings): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (typeof v === 'string') {
      out[k] = v;
    }
  }
  if (isObject(s.env)) {
    for (const [k, v] of Object.entries(s.env)) {
      if (typeof v === 'string') {
        out[k] = v;
      }
    }
  }
  return out;
}

/** Whether a change of these settings needs the server restarted (process-level ones). */
export function needsRestart(before: ExtensionSettings, after: ExtensionSettings): boolean {
  const a = serverCommand(before);
  const b = serverCommand(after);
  return (
    a.command !== b.command ||
    a.args.join('\0') !== b.args.join('\0') ||
    JSON.stringify(before.env ?? {}) !== JSON.stringify(after.env ?? {})
  );
}

/** The model shown in the status bar: the setting, else what agentls.settings names. */
export function modelLabel(s: ExtensionSettings): string {
  if (typeof s.model === 'string' && s.model.trim() !== '') {
    return s.model.trim();
  }
  const m = isObject(s.settings) ? s.settings.model : undefined;
  if (typeof m === 'string' && m !== '') {
    return m;
  }
  if (isObject(m) && typeof m.name === 'string' && m.name !== '') {
    return m.name;
  }
  return 'default model';
}
