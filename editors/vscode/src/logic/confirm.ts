// What a confirmation (agentls/confirm) offers and how it is worded, and how an answer
// to an edit is built. No vscode import: unit tested under node.

export type Outcome =
  | 'proceed_once'
  | 'proceed_always'
  | 'proceed_always_server'
  | 'proceed_always_tool'
  | 'modify_with_editor'
  | 'cancel';

const outcomes: ReadonlySet<string> = new Set([
  'proceed_once',
  'proceed_always',
  'proceed_always_server',
  'proceed_always_tool',
  'cancel',
]);

/** ConfirmDetails of the protocol (the fields the extension reads). */
export interface ConfirmDetails {
  id: string;
  toolCallId?: string;
  type: 'edit' | 'execute' | 'mcp' | 'info' | string;
  title?: string;
  toolName?: string;
  // edit
  uri?: string;
  path?: string;
  diff?: string;
  originalContent?: string | null;
  newContent?: string;
  // execute
  command?: string;
  rootCommands?: string[];
  directory?: string;
  // mcp
  server?: string;
  tool?: string;
  arguments?: unknown;
  // info
  prompt?: string;
  urls?: string[];
  // extensions
  choices?: { outcome: string; label: string }[];
  noAlways?: boolean;
  // ask_user (experimental.agentls.askUser): see ./ask
  questions?: unknown;
}

export interface ConfirmAnswer {
  outcome: Outcome;
  content?: string;
  /** The answers to an ask_user confirmation's questions, by question index. */
  answers?: Record<string, string>;
}

export interface Choice {
  label: string;
  outcome: Outcome;
  /** Whether this is the refusal (shown apart from the others). */
  reject?: boolean;
}

/**
 * The answers offered for a confirmation, in display order: the question's own choices
 * when it offers usable ones, else "Allow once", what "always" would allow (unless the
 * question holds for this call only) and "Reject".
 */
export function choices(d: ConfirmDetails): Choice[] {
  if (d.type === 'ask_user') {
    // The questions are answered in the quick input; "Allow" would answer none of them.
    return [{ label: 'Dismiss', outcome: 'cancel', reject: true }];
  }
  if (Array.isArray(d.choices) && d.choices.length > 0) {
    const own: Choice[] = [];
    for (const c of d.choices) {
      if (!c || typeof c.label !== 'string' || !outcomes.has(c.outcome)) {
        own.length = 0;
        break;
      }
      own.push({ label: c.label, outcome: c.outcome as Outcome, reject: c.outcome === 'cancel' });
    }
    if (own.length > 0) {
      return own;
    }
  }
  const out: Choice[] = [{ label: 'Allow once', outcome: 'proceed_once' }];
  if (!d.noAlways) {
    if (d.type === 'execute') {
      const roots = Array.isArray(d.rootCommands) ? d.rootCommands.filter((r) => typeof r === 'string' && r !== '') : [];
      out.push({
        label: roots.length > 0 ? `Always allow ${roots.join(', ')}` : 'Always allow this command',
        outcome: 'proceed_always',
      });
    } else if (d.type === 'mcp') {
      out.push({ label: `Always allow tool ${d.tool ?? '?'}`, outcome: 'proceed_always_tool' });
      out.push({ label: `Always allow server ${d.server ?? '?'}`, outcome: 'proceed_always_server' });
    } else if (d.type === 'edit') {
      out.push({ label: 'Accept always (auto_edit)', outcome: 'proceed_always' });
    } else {
      out.push({ label: 'Always allow', outcome: 'proceed_always' });
    }
  }
  out.push({ label: 'Reject', outcome: 'cancel', reject: true });
  return out;
}

/** The question in one or a few lines, for a notification or a tool card. */
export function question(d: ConfirmDetails, shortPath?: string): string {
  const title = typeof d.title === 'string' && d.title !== '' ? d.title : d.toolName ?? 'agentls';
  switch (d.type) {
    case 'execute': {
      const dir = typeof d.directory === 'string' && d.directory !== '' ? ` in ${shortPath ?? d.directory}` : '';
      return `Run \`${d.command ?? '?'}\`${dir}?`;
    }
    case 'mcp':
      return `Call ${d.tool ?? '?'} on MCP server ${d.server ?? '?'}${d.arguments !== undefined ? ' ' + JSON.stringify(d.arguments) : ''}?`;
    case 'info': {
      const text = typeof d.prompt === 'string' && d.prompt !== '' && d.prompt !== title ? `${title}: ${d.prompt}` : title;
      const urls = Array.isArray(d.urls) && d.urls.length > 0 ? ` (${d.urls.join(', ')})` : '';
      return text + urls;
    }
    case 'edit':
      return `${title}${shortPath ? ` (${shortPath})` : ''}?`;
    case 'ask_user':
      return `${title}: answer in the box at the top of the window (Escape dismisses all the questions)`;
    default:
      return title;
  }
}

/** What "always" allows, said in words, for the shell question. */
export function alwaysNote(d: ConfirmDetails): string | undefined {
  if (d.type === 'ask_user') {
    return undefined;
  }
  if (d.noAlways) {
    return 'This question is asked every time.';
  }
  if (d.type === 'execute') {
    const roots = Array.isArray(d.rootCommands) ? d.rootCommands : [];
    if (roots.length === 0) {
      return '"Always" cannot cover this command line: it will be asked every time.';
    }
    return `"Always" allows ${roots.map((r) => `\`${r}\``).join(', ')} for the rest of the session.`;
  }
  if (d.type === 'edit') {
    return '"Accept always" switches the session to auto_edit: later edits are applied without asking.';
  }
  return undefined;
}

/**
 * The answer to an edit accepted from the diff editor: the proposal as it was shown is
 * "proceed_once" (or "proceed_always"); an edited proposal is the user's version
 * ("modify_with_editor" with the content), which "always" cannot cover.
 */
export function editAnswer(proposed: string, shown: string, always: boolean): ConfirmAnswer {
  if (normalizeEol(shown, proposed) !== proposed) {
    return { outcome: 'modify_with_editor', content: normalizeEol(shown, proposed) };
  }
  return { outcome: always ? 'proceed_always' : 'proceed_once' };
}

/**
 * text with the line breaks of like: an editor may hand back LF where the file had
 * CRLF; the user's version keeps the file's convention.
 */
export function normalizeEol(text: string, like: string): string {
  const crlf = like.includes('\r\n');
  const lf = text.replace(/\r\n/g, '\n');
  return crlf ? lf.replace(/\n/g, '\r\n') : lf;
}
