// The turn commands' logic, free of VS Code: what agentls.turnDiff's diff says of each
// file (the "# " lines the server puts above each file's hunks), and the messages and
// questions of agentls.undoTurn and agentls.redoTurn.

/** agentls.turnDiff's result (docs/protocol.md). */
export interface TurnDiff {
  session: string;
  turn: number;
  files: string[];
  diff: string;
  undone?: boolean;
  changes?: { path: string; from?: string; by?: string[] }[];
  unrecorded?: string[];
  leftOut?: number;
}

/** agentls.undoTurn's and agentls.redoTurn's result. */
export interface TurnBack {
  session: string;
  turn: number;
  reverted?: string[];
  deleted?: string[];
  changed?: string[];
  notRestorable?: string[];
  unrecorded?: string[];
  leftOut?: number;
}

/** One file of a turn diff: its header line and the lines of its notes and hunks. */
export interface DiffFile {
  /** The path as the diff names it, relative to the workspace. */
  rel: string;
  /** "changed by …": the calls that changed it, as the server wrote them. */
  by: string;
  /** The 0-based line of its header, and of its last line. */
  line: number;
  end: number;
  /** Its other "# " lines: renamed from, mode, folder, binary. */
  notes: string[];
}

/** What a turn diff's lines say: its files, and its closing lines of what it left out. */
export interface DiffOutline {
  files: DiffFile[];
  /** 0-based lines of "# not recorded: …" and "# left out: …". */
  warnings: number[];
}

const header = /^# (.*?): changed by (.*)$/;
const warning = /^# (not recorded|left out): /;

/** Reads the "# " lines of agentls.turnDiff's diff text. */
export function outline(diff: string): DiffOutline {
  const lines = diff.replace(/\n$/, '').split('\n');
  const out: DiffOutline = { files: [], warnings: [] };
  let cur: DiffFile | undefined;
  lines.forEach((l, i) => {
    const h = header.exec(l);
    if (h) {
      cur = { rel: h[1], by: h[2], line: i, end: i, notes: [] };
      out.files.push(cur);
      return;
    }
    if (warning.test(l)) {
      out.warnings.push(i);
      cur = undefined;
      return;
    }
    if (cur) {
      cur.end = i;
      if (l.startsWith('# ')) {
        cur.notes.push(l.slice(2));
      }
    }
  });
  return out;
}

/** The file of the diff at 0-based line, if any. */
export function fileAt(o: DiffOutline, line: number): DiffFile | undefined {
  return o.files.find((f) => f.line <= line && line <= f.end);
}

/** The title of a turn diff's document. */
export function diffTitle(d: Pick<TurnDiff, 'turn' | 'undone' | 'unrecorded'>): string {
  const n = d.unrecorded?.length ?? 0;
  return `agentls prompt ${d.turn}${d.undone ? ' (undone)' : ''}${n > 0 ? ` · ${n} command${n === 1 ? '' : 's'} not recorded` : ''}`;
}

/**
 * What an undo or redo left as it was, or could not know: files whose earlier content
 * was not kept, commands not recorded, ignored paths left out.
 */
export function turnNotes(r: TurnBack): string[] {
  const notes: string[] = [];
  if (r.notRestorable && r.notRestorable.length > 0) {
    notes.push(`not restorable (left as they are): ${r.notRestorable.join(', ')}`);
  }
  if (r.unrecorded && r.unrecorded.length > 0) {
    notes.push(`not recorded, so not taken back: ${r.unrecorded.join(', ')}`);
  }
  if (r.leftOut && r.leftOut > 0) {
    notes.push(`${r.leftOut} ignored path${r.leftOut === 1 ? '' : 's'} left out`);
  }
  return notes;
}

/** Whether the server did nothing because files changed since: the user is asked. */
export function refusedForChanges(r: TurnBack): boolean {
  return (r.changed?.length ?? 0) > 0 && (r.reverted?.length ?? 0) === 0 && (r.deleted?.length ?? 0) === 0;
}

/** The modal question when refusedForChanges; names are the changed files, shortened. */
export function changedQuestion(r: TurnBack, redo: boolean, names: string[]): { message: string; force: string } {
  return {
    message: `agentls: ${names.join(', ')} changed since ${redo ? 'the undo of prompt' : 'prompt'} ${r.turn}, so nothing was ${redo ? 'redone' : 'undone'}. ${redo ? 'Redo' : 'Undo'} the other files anyway?`,
    force: redo ? 'Redo the Others' : 'Undo the Others',
  };
}

/**
 * The message of a done undo or redo, and whether it is a warning (something was left
 * as it was or could not be known); names shortens a list of absolute paths.
 */
export function turnBackMessage(r: TurnBack, redo: boolean, names: (paths: string[]) => string[]): { text: string; warning: boolean } {
  const reverted = r.reverted?.length ?? 0;
  const deleted = r.deleted?.length ?? 0;
  const notes = turnNotes(r);
  if (r.changed && r.changed.length > 0) {
    notes.unshift(`left as they are (changed since): ${names(r.changed).join(', ')}`);
  }
  const text =
    `agentls: ${redo ? 'redid' : 'undid'} prompt ${r.turn}: ${reverted} file${reverted === 1 ? '' : 's'} ${redo ? 'brought back' : 'reverted'}, ${deleted} deleted` +
    (notes.length > 0 ? `; ${notes.join('; ')}` : '');
  return { text, warning: notes.length > 0 };
}
