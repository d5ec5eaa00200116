// What a confirmation (agentls/confirm) offers (the server's choices) and how it is
// worded, and how an answer is built. No vscode import: unit tested under node.

export type Outcome =
  | 'proceed_once'
  | 'proceed_always'
  | 'proceed_always_server'
  | 'proceed_always_tool'
  | 'modify_with_editor'
  | 'cancel'
  | 'reject_always';

const outcomes: ReadonlySet<string> = new Set([
  'proceed_once',
  'proceed_always',
  'proceed_always_server',
  'proceed_always_tool',
  'cancel',
  'reject_always',
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
  /** The answers the server offers, in the order to show them (see choices). */
  choices?: { id?: string; outcome?: string; label?: string; covers?: string; persist?: string }[];
  noAlways?: boolean;
  /** An edit's hunks, in the order of its diff (per-hunk consent; see hunksOf). */
  hunks?: Hunk[];
  // ask_user (experimental.agentls.askUser): see ./ask
  questions?: unknown;
}

/**
 * The result of agentls/confirm: the id of the offered choice the user picked, or
 * (for an edited proposal, ask_user's questions, or a question that offered no
 * choices) an outcome.
 */
export interface ConfirmAnswer {
  choice?: string;
  outcome?: Outcome;
  content?: string;
  /** The answers to an ask_user confirmation's questions, by question index. */
  answers?: Record<string, string>;
  /** With proceed_once: the indices of the hunks to apply, the others left out. */
  acceptedHunks?: number[];
}

/**
 * A hunk of an edit's diff, numbered as its @@ header numbers it: 1-based lines (0 for
 * an empty side at the top of a file), the counts including context lines.
 */
export interface Hunk {
  index: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

export interface Choice {
  /** The server's id of the choice; the key the chat and the commands answer with. */
  id: string;
  label: string;
  /** The outcome the server gave the choice (a future one stays a string). */
  outcome: string;
  /** Whether this refuses the call (shown apart from the others). */
  reject: boolean;
  /**
   * Whether the server offered no choices and this is the extension's own stand-in,
   * answered with its outcome: a choice id the server did not offer is a refusal.
   */
  byOutcome?: boolean;
}

/**
 * The answers offered for a confirmation, in display order: the server's choices, with
 * their labels exactly as it wrote them (it makes them once for every front end, so an
 * answer means the same everywhere). A question that came without any is offered
 * "Allow once" and "Reject" alone: what "always" would cover is the server's to say.
 * ask_user's questions are answered in the quick input; their only choice is "Dismiss".
 */
export function choices(d: ConfirmDetails): Choice[] {
  if (d.type === 'ask_user') {
    return [{ id: 'cancel', label: 'Dismiss', outcome: 'cancel', reject: true, byOutcome: true }];
  }
  const own: Choice[] = [];
  for (const c of Array.isArray(d.choices) ? d.choices : []) {
    if (!c || typeof c.label !== 'string' || c.label === '') {
      continue; // nothing to show
    }
    const outcome = typeof c.outcome === 'string' ? c.outcome : '';
    const reject = outcome === 'cancel' || outcome === 'reject_always';
    if (typeof c.id === 'string' && c.id !== '') {
      // An outcome the extension does not know is fine: the id answers it.
      own.push({ id: c.id, label: c.label, outcome, reject });
    } else if (outcomes.has(outcome)) {
      // A question of the server's own without ids (an older server, or one asked
      // outside the scheduler): answered with the outcome, which the server still takes.
      own.push({ id: outcome, label: c.label, outcome, reject, byOutcome: true });
    }
  }
  if (own.length > 0) {
    return own;
  }
  return [
    { id: 'once', label: 'Allow once', outcome: 'proceed_once', reject: false, byOutcome: true },
    { id: 'reject', label: 'Reject', outcome: 'cancel', reject: true, byOutcome: true },
  ];
}

/** The label of the notification's button that opens all the choices in a pick. */
export const moreLabel = 'More…';

/**
 * The choices a notification shows as buttons. A toast is about 450 pixels wide, and
 * VS Code cuts the labels of buttons that do not fit ("Al…", "Always all…"): a few short
 * choices are all shown; otherwise "Allow once" and "Reject" (the choices with those
 * outcomes), and more is set: a More… button opens every choice, labels in full.
 */
export function notificationButtons(cs: Choice[]): { buttons: Choice[]; more: boolean } {
  const chars = cs.reduce((n, c) => n + c.label.length, 0);
  if (cs.length <= 3 && chars <= 48) {
    return { buttons: cs, more: false };
  }
  const once = cs.find((c) => c.outcome === 'proceed_once') ?? cs.find((c) => !c.reject);
  const reject = cs.find((c) => c.outcome === 'cancel') ?? cs.find((c) => c.reject);
  const buttons = cs.filter((c) => c === once || c === reject);
  return { buttons, more: buttons.length < cs.length };
}

/** The answer that picks c. */
export function answerFor(c: Choice): ConfirmAnswer {
  return c.byOutcome ? { outcome: c.outcome as Outcome } : { choice: c.id };
}

/**
 * The answer that refuses the call once: the offered choice whose outcome is "cancel"
 * (Reject, Not now), else the outcome. What closing a diff or dismissing a notification
 * answers: no answer is never consent.
 */
export function refusal(d: ConfirmDetails): ConfirmAnswer {
  const c = choices(d).find((x) => x.outcome === 'cancel');
  return c ? answerFor(c) : { outcome: 'cancel' };
}

/** The choice of d that allows the call this once (an edit's Accept), if offered. */
export function onceChoice(d: ConfirmDetails): Choice | undefined {
  return choices(d).find((c) => c.outcome === 'proceed_once');
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

/**
 * A note for a question whose choices hold for this call only: the labels of the
 * others say what their "always" covers.
 */
export function alwaysNote(d: ConfirmDetails): string | undefined {
  if (d.type === 'ask_user') {
    return undefined;
  }
  const offered = choices(d);
  if (offered.some((c) => c.outcome.startsWith('proceed_always'))) {
    return undefined;
  }
  if (d.noAlways) {
    return 'This question is asked every time.';
  }
  if (d.type === 'execute' && !offered.some((c) => c.byOutcome)) {
    return 'No "always" can cover this command line: it is asked every time.';
  }
  return undefined;
}

/**
 * The answer to an edit given from the diff editor, the chat or a command, picking
 * choice: the proposal as it was shown takes the choice; an edited proposal accepted
 * any way is the user's version ("modify_with_editor" with the content), which no
 * "always" covers. A refusal stays a refusal, whatever the proposal holds.
 */
export function editAnswer(proposed: string, shown: string, choice: Choice): ConfirmAnswer {
  if (!choice.reject && normalizeEol(shown, proposed) !== proposed) {
    return { outcome: 'modify_with_editor', content: normalizeEol(shown, proposed) };
  }
  return answerFor(choice);
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

/**
 * The hunks of an edit that can be decided one by one: those the server listed, when
 * there are at least two of them and each is well formed; otherwise none.
 */
export function hunksOf(d: ConfirmDetails): Hunk[] {
  if (d.type !== 'edit' || !Array.isArray(d.hunks) || d.hunks.length < 2) {
    return [];
  }
  const ok = d.hunks.every(
    (h) =>
      h !== null &&
      typeof h === 'object' &&
      [h.index, h.oldStart, h.oldLines, h.newStart, h.newLines].every((n) => Number.isInteger(n) && n >= 0),
  );
  return ok ? d.hunks : [];
}

/**
 * The lines (0-based, first and last, inclusive) a hunk spans on one side of the diff;
 * a side with no lines sits on the line after which its lines would be (the first line
 * of an empty top).
 */
export function hunkLines(h: Hunk, side: 'old' | 'new'): { first: number; last: number } {
  const start = side === 'new' ? h.newStart : h.oldStart;
  const count = side === 'new' ? h.newLines : h.oldLines;
  if (count === 0) {
    const at = Math.max(start - 1, 0);
    return { first: at, last: at + 1 };
  }
  return { first: start - 1, last: start - 1 + count - 1 };
}

/** The position in hunks of the hunk spanning line (0-based) on a side, or -1. */
export function hunkAt(hunks: Hunk[], line: number, side: 'old' | 'new'): number {
  return hunks.findIndex((h) => {
    const { first, last } = hunkLines(h, side);
    return line >= first && line <= last;
  });
}

/**
 * The first line (0-based) of the proposal that a hunk changes, past its leading
 * context: where its mark goes. oldText and newText are the two sides of the diff.
 */
export function firstChange(h: Hunk, oldText: string, newText: string): number {
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  const o = Math.max(h.oldStart - 1, 0);
  const n = Math.max(h.newStart - 1, 0);
  let k = 0;
  while (k < h.oldLines && k < h.newLines && oldLines[o + k] === newLines[n + k]) {
    k++;
  }
  const last = Math.max(newLines.length - 1, 0);
  return Math.min(h.newLines === 0 ? n : n + Math.min(k, h.newLines - 1), last);
}

/**
 * The lines (0-based, inclusive) of the proposal that a hunk changes, its leading and
 * trailing context left out; undefined when it only deletes lines.
 */
export function changedLines(h: Hunk, oldText: string, newText: string): { first: number; last: number } | undefined {
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  const o = Math.max(h.oldStart - 1, 0);
  const n = Math.max(h.newStart - 1, 0);
  let k = 0;
  while (k < h.oldLines && k < h.newLines && oldLines[o + k] === newLines[n + k]) {
    k++;
  }
  let t = 0;
  while (t < h.oldLines - k && t < h.newLines - k && oldLines[o + h.oldLines - 1 - t] === newLines[n + h.newLines - 1 - t]) {
    t++;
  }
  const first = n + k;
  const last = n + h.newLines - 1 - t;
  return first <= last ? { first, last } : undefined;
}

function splitLines(s: string): string[] {
  return s.replace(/\r\n/g, '\n').split('\n');
}

/** What the user decided about one hunk; undefined is not decided yet. */
export type HunkState = 'accepted' | 'rejected' | undefined;

/**
 * The answer to an edit whose hunks were decided one by one, picking choice (not a
 * refusal): every hunk not rejected is applied (a hunk not decided goes with the edit,
 * as the editor's Accept says), and the server is told which by index. With none
 * rejected this is the choice itself; with all rejected it is a refusal. A choice other
 * than "once" cannot carry hunks: the answer is once, and covered says so (false).
 */
export function hunkAnswer(d: ConfirmDetails, states: HunkState[], choice: Choice): { answer: ConfirmAnswer; covered: boolean } {
  const hunks = hunksOf(d);
  const accepted = hunks.filter((_, i) => states[i] !== 'rejected').map((h) => h.index);
  if (choice.reject || accepted.length === hunks.length) {
    return { answer: answerFor(choice), covered: true };
  }
  if (accepted.length === 0) {
    return { answer: refusal(d), covered: true };
  }
  const once = choice.outcome === 'proceed_once' ? choice : onceChoice(d);
  const base: ConfirmAnswer = once ? answerFor(once) : { outcome: 'proceed_once' };
  return { answer: { ...base, acceptedHunks: accepted }, covered: choice.outcome === 'proceed_once' };
}

/**
 * The summary of the hunk answers so far, e.g. "hunks 1✓ 2✗ 3? · Accept applies 2 of
 * 3": each hunk's number with ✓ (accepted), ✗ (rejected) or ? (not decided).
 */
export function hunkSummary(states: HunkState[], n: number): string {
  const parts: string[] = [];
  let taken = 0;
  for (let i = 0; i < n; i++) {
    const s = states[i];
    parts.push(`${i + 1}${s === 'accepted' ? '✓' : s === 'rejected' ? '✗' : '?'}`);
    if (s !== 'rejected') {
      taken++;
    }
  }
  const what = taken === 0 ? 'Accept rejects the edit' : taken === n ? 'Accept applies all' : `Accept applies ${taken} of ${n}`;
  return `hunks ${parts.join(' ')} · ${what}`;
}
