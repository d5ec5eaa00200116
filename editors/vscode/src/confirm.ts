// agentls/confirm: edits are reviewed in VS Code's diff editor (the current text on the
// left, the editable proposal on the right, Accept / Reject / More Answers… in the
// editor title, the last a pick of every answer the server offers); shell commands, MCP
// calls and questions as a notification with the server's choices (those that do not
// fit behind More…, a pick of all of them); ask_user's
// questions (the model's, or an MCP server's form) one by one in the quick input. The
// chat shows the same question on the call's card. Closing the diff, dismissing the
// notification, the server taking the question back ($/cancelRequest) or the server
// going away are refusals: no answer is never consent.
//
// An edit of several hunks can be taken in part: on the proposal, each hunk carries a
// mark (not decided, ✓ accepted, ✗ rejected), and Accept This Hunk / Reject This Hunk
// (the light bulb's code actions on the hunk, Alt+Y / Alt+N, the palette) decide the
// hunk under the cursor. Accept Edit then applies every hunk not rejected, and the
// server tells the model which were taken (acceptedHunks, docs/protocol.md).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { askAll, Step, StepResult } from './logic/ask';
import {
  alwaysNote,
  answerFor,
  changedLines,
  Choice,
  choices,
  ConfirmAnswer,
  ConfirmDetails,
  editAnswer,
  firstChange,
  Hunk,
  hunkAnswer,
  hunkAt,
  hunkLines,
  hunksOf,
  HunkState,
  hunkSummary,
  moreLabel,
  notificationButtons,
  onceChoice,
  question,
  refusal,
} from './logic/confirm';
import { idOf, OriginalProvider, originalScheme, ProposalFs, proposalScheme, sideUri } from './proposals';

export interface Pending {
  details: ConfirmDetails;
  /** For edits: the two sides of the diff. */
  original?: vscode.Uri;
  proposal?: vscode.Uri;
  answer(a: ConfirmAnswer): boolean;
  answered: boolean;
  /**
   * Closes the quick input asking about it (ask_user's questions, an edit's More
   * Answers…) once it is answered another way.
   */
  closeInput?: vscode.CancellationTokenSource;
  /** For an edit of several hunks: what the user decided about each, by position. */
  hunkStates?: HunkState[];
}

export class Confirmations implements vscode.Disposable {
  private pending = new Map<string, Pending>();
  /** The short keys naming the diffs' sides (a URI segment), by confirmation id. */
  private keys = new Map<string, string>();
  private seq = 0;
  /** The ask_user questions being put: one set at a time, in the one quick input. */
  private questions: Promise<void> = Promise.resolve();
  /** How many questions were put since the extension started (for its API). */
  asked = 0;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly originals = new OriginalProvider();
  private readonly proposals = new ProposalFs();
  private disposables: vscode.Disposable[] = [];
  /** The mark at the first changed line of each hunk of a proposal. */
  private readonly hunkMark = vscode.window.createTextEditorDecorationType({
    after: { margin: '0 0 0 2em', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  /** The changed lines of a rejected hunk: they will not be applied. */
  private readonly hunkRejected = vscode.window.createTextEditorDecorationType({
    textDecoration: 'line-through',
    opacity: '0.55',
    isWholeLine: true,
  });

  constructor(private readonly log: (msg: string) => void) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(originalScheme, this.originals),
      vscode.workspace.registerFileSystemProvider(proposalScheme, this.proposals, { isCaseSensitive: true }),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const id = this.diffId(tab);
          const p = id !== undefined ? this.pending.get(id) : undefined;
          if (p && !p.answered) {
            this.log(`edit ${id}: the diff was closed without an answer: rejected`);
            p.answer(refusal(p.details));
          }
        }
        this.updateContext();
      }),
      vscode.window.tabGroups.onDidChangeTabGroups(() => this.updateContext()),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateContext()),
      vscode.window.onDidChangeVisibleTextEditors(() => this.markAllHunks()),
      vscode.languages.registerCodeActionsProvider(
        [{ scheme: proposalScheme }, { scheme: originalScheme }],
        { provideCodeActions: (doc, range) => this.hunkActions(doc, range) },
        { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] },
      ),
      this.changed,
      this.hunkMark,
      this.hunkRejected,
    );
    this.proposals.onSave = (uri, text) => {
      const id = this.idOf(uri);
      const p = id !== undefined ? this.pending.get(id) : undefined;
      if (p && !p.answered && p.details.type === 'edit') {
        this.log(`edit ${id}: the proposal was saved: accepted (as the user's version, if they changed it)`);
        this.pick(p, accept(p.details), text);
      }
    };
  }

  dispose(): void {
    this.cancelAll();
    for (const d of this.disposables) {
      d.dispose();
    }
  }

  /** The confirmations waiting, oldest first. */
  list(): Pending[] {
    return [...this.pending.values()];
  }

  byToolCall(toolCallId: string): Pending | undefined {
    return this.list().find((p) => p.details.toolCallId === toolCallId);
  }

  /** Handles an agentls/confirm request: resolves with the user's answer. */
  ask(details: ConfirmDetails, token: vscode.CancellationToken): Promise<ConfirmAnswer> {
    return new Promise<ConfirmAnswer>((resolve) => {
      const id = String(details.id ?? `anon-${Date.now()}`);
      this.asked++;
      const entry: Pending = {
        details: { ...details, id },
        answered: false,
        answer: (a) => {
          if (entry.answered) {
            return false;
          }
          entry.answered = true;
          this.pending.delete(id);
          resolve(a);
          void this.takeDown(entry);
          this.changed.fire();
          this.updateContext();
          return true;
        },
      };
      this.pending.set(id, entry);
      token.onCancellationRequested(() => {
        if (!entry.answered) {
          this.log(`confirmation ${id}: taken back by the server`);
          entry.answer(refusal(entry.details));
        }
      });
      this.changed.fire();
      const shown =
        details.type === 'edit' ? this.openDiff(entry) : details.type === 'ask_user' ? this.openQuestions(entry) : this.notify(entry);
      shown.catch((err: unknown) => {
        void vscode.window.showErrorMessage(`agentls: could not show the confirmation, the call was refused: ${String(err)}`);
        entry.answer(refusal(entry.details));
      });
    });
  }

  /**
   * Answers a waiting confirmation with the offered choice whose id is choiceId (from
   * the chat's buttons); false when nothing waits under id or no such choice was offered.
   */
  answer(id: string, choiceId: string): boolean {
    const p = this.pending.get(id);
    const c = p && choices(p.details).find((x) => x.id === choiceId);
    return p !== undefined && c !== undefined && this.pick(p, c);
  }

  /**
   * Answers p with the choice c; an edit's with the proposal as it now stands (the
   * user's version when they changed it), or with the hunks not rejected.
   */
  private pick(p: Pending, c: Choice, shown?: string): boolean {
    if (p.details.type !== 'edit') {
      return p.answer(answerFor(c));
    }
    const proposed = p.details.newContent ?? '';
    const text = shown ?? this.proposalText(p);
    if (!c.reject && p.hunkStates?.includes('rejected')) {
      if (editAnswer(proposed, text, c).outcome === 'modify_with_editor') {
        void vscode.window.showWarningMessage(
          'agentls: you edited the proposal and rejected hunks of it. Undo your changes to answer by hunk, or accept the hunks again (Accept This Hunk) to accept your version.',
        );
        return false;
      }
      const { answer, covered } = hunkAnswer(p.details, p.hunkStates, c);
      if (!covered) {
        void vscode.window.showWarningMessage(
          `agentls: "${c.label}" cannot cover a part of the edit. The hunks you kept were accepted once; later edits will still ask.`,
        );
      }
      this.log(`edit ${p.details.id}: answered by hunk: ${JSON.stringify(answer)}`);
      return p.answer(answer);
    }
    const a = editAnswer(proposed, text, c);
    if (a.outcome === 'modify_with_editor' && c.outcome.startsWith('proceed_always')) {
      void vscode.window.showWarningMessage(
        `agentls: you edited the proposal, and "${c.label}" cannot cover your version. It was accepted once; later edits will still ask.`,
      );
    }
    return p.answer(a);
  }

  /** Refuses every waiting confirmation (the server stopped). */
  cancelAll(): void {
    for (const p of this.list()) {
      p.answer(refusal(p.details));
    }
  }

  /** Opens the diff of a waiting edit again (it was closed or is in the background). */
  async review(id: string): Promise<void> {
    const p = this.pending.get(id);
    if (p && p.original && p.proposal) {
      await vscode.commands.executeCommand('vscode.diff', p.original, p.proposal, diffTitle(p.details), {
        preview: false,
      });
    }
  }

  /** The edit under review in the active editor, else the only waiting edit. */
  current(): Pending | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const id = tab ? this.diffId(tab) : undefined;
    if (id !== undefined && this.pending.has(id)) {
      return this.pending.get(id);
    }
    const edits = this.list().filter((p) => p.details.type === 'edit');
    return edits.length === 1 ? edits[0] : undefined;
  }

  /**
   * The commands of the diff editor's title: Accept (the proposal once, or the user's
   * version), Reject, and More Answers… (a pick of every choice the server offers, with
   * its labels: allowing every edit of the session, saving a rule, rejecting always).
   */
  async decideCurrent(kind: 'accept' | 'reject' | 'more'): Promise<void> {
    const p = this.current();
    if (!p) {
      void vscode.window.showInformationMessage('agentls: no edit is waiting for review here.');
      return;
    }
    if (kind === 'reject') {
      p.answer(refusal(p.details));
      return;
    }
    if (kind === 'accept') {
      this.pick(p, accept(p.details));
      return;
    }
    if (p.closeInput) {
      return; // its pick is up already
    }
    const chosen = await this.pickChoice(p, `agentls: ${diffTitle(p.details)}`);
    if (chosen && !p.answered) {
      this.pick(p, chosen);
    }
  }

  /**
   * Accepts or rejects one hunk of the edit under review: the one at index (a position
   * in its hunks) of the confirmation id, or the hunk under the cursor of the active
   * diff. The cursor then moves on to the next hunk, and the status bar sums up.
   */
  decideHunk(kind: 'accept' | 'reject', id?: string, index?: number): void {
    const p = id !== undefined ? this.pending.get(id) : this.current();
    if (!p || p.answered) {
      void vscode.window.showInformationMessage('agentls: no edit is waiting for review here.');
      return;
    }
    const hunks = hunksOf(p.details);
    if (hunks.length === 0) {
      void vscode.window.showInformationMessage('agentls: this edit has no hunks to decide one by one: accept or reject it.');
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const side = editor ? this.sideOf(p, editor.document.uri) : undefined;
    let i = index;
    if (i === undefined) {
      i = editor && side ? hunkAt(hunks, editor.selection.active.line, side) : -1;
      if (i < 0) {
        void vscode.window.showInformationMessage('agentls: the cursor is not on a hunk of the proposal.');
        return;
      }
    }
    if (!Number.isInteger(i) || i < 0 || i >= hunks.length) {
      return;
    }
    p.hunkStates ??= [];
    p.hunkStates[i] = kind === 'accept' ? 'accepted' : 'rejected';
    this.log(`edit ${p.details.id}: hunk ${i + 1} of ${hunks.length} ${p.hunkStates[i]}`);
    this.markHunks(p);
    this.changed.fire();
    vscode.window.setStatusBarMessage(
      `agentls: hunk ${i + 1} of ${hunks.length} ${p.hunkStates[i]} · ${hunkSummary(p.hunkStates, hunks.length)}`,
      10000,
    );
    // On to the next hunk, in the side the user is in.
    const next = hunks[i + 1];
    if (editor && side && next) {
      const line = side === 'new' ? this.markLine(p, next) : hunkLines(next, 'old').first;
      const pos = new vscode.Position(Math.min(line, editor.document.lineCount - 1), 0);
      editor.selection = new vscode.Selection(pos, pos);
      editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }

  /** The summary of p's hunk answers ("hunks 1✓ 2✗ 3? · …"), if it has hunks to decide. */
  hunkSummary(p: Pending): string | undefined {
    const n = hunksOf(p.details).length;
    return n > 0 ? hunkSummary(p.hunkStates ?? [], n) : undefined;
  }

  /** Which side of p's diff uri is: its proposal ("new") or current text ("old"). */
  private sideOf(p: Pending, uri: vscode.Uri): 'old' | 'new' | undefined {
    const u = uri.toString();
    return u === p.proposal?.toString() ? 'new' : u === p.original?.toString() ? 'old' : undefined;
  }

  /** The code actions on the hunk under the cursor of a side of an edit's diff. */
  private hunkActions(doc: vscode.TextDocument, range: vscode.Range): vscode.CodeAction[] {
    const id = this.idOf(doc.uri);
    const p = id !== undefined ? this.pending.get(id) : undefined;
    const side = p ? this.sideOf(p, doc.uri) : undefined;
    if (!p || p.answered || !side) {
      return [];
    }
    const hunks = hunksOf(p.details);
    const i = hunkAt(hunks, range.start.line, side);
    if (i < 0) {
      return [];
    }
    const state = p.hunkStates?.[i];
    const out: vscode.CodeAction[] = [];
    for (const [kind, title] of [
      ['accept', `Accept This Hunk (${i + 1} of ${hunks.length})`],
      ['reject', `Reject This Hunk (${i + 1} of ${hunks.length})`],
    ] as const) {
      if (state === (kind === 'accept' ? 'accepted' : 'rejected')) {
        continue;
      }
      const a = new vscode.CodeAction(title, vscode.CodeActionKind.QuickFix);
      a.command = { command: `agentls.edit.${kind}Hunk`, title, arguments: [p.details.id, i] };
      out.push(a);
    }
    return out;
  }

  /** The line (0-based) of the proposal where a hunk's mark goes: its first change. */
  private markLine(p: Pending, h: Hunk): number {
    const orig = typeof p.details.originalContent === 'string' ? p.details.originalContent : '';
    return firstChange(h, orig, p.details.newContent ?? '');
  }

  /** Marks the hunks of every edit under review in the editors showing them. */
  private markAllHunks(): void {
    for (const p of this.pending.values()) {
      this.markHunks(p);
    }
  }

  /**
   * Marks each hunk of p on its proposal, where an editor shows it: what was decided
   * (or the keys that decide it), and the changed lines of a rejected hunk struck out.
   */
  private markHunks(p: Pending): void {
    const hunks = hunksOf(p.details);
    if (hunks.length === 0 || !p.proposal) {
      return;
    }
    const proposal = p.proposal.toString();
    const editors = vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === proposal);
    if (editors.length === 0) {
      return;
    }
    const doc = editors[0].document;
    const orig = typeof p.details.originalContent === 'string' ? p.details.originalContent : '';
    const proposed = p.details.newContent ?? '';
    const marks: vscode.DecorationOptions[] = [];
    const struck: vscode.Range[] = [];
    hunks.forEach((h, i) => {
      const state = p.hunkStates?.[i];
      const line = firstChange(h, orig, proposed);
      const what =
        state === 'accepted'
          ? `✓ hunk ${i + 1} of ${hunks.length} accepted`
          : state === 'rejected'
            ? `✗ hunk ${i + 1} of ${hunks.length} rejected: not applied`
            : `hunk ${i + 1} of ${hunks.length} · ${keys.accept} accept · ${keys.reject} reject`;
      // At the end of the line, after its text.
      const end = doc.lineAt(Math.min(line, doc.lineCount - 1)).range.end;
      marks.push({ range: new vscode.Range(end, end), renderOptions: { after: { contentText: what } } });
      if (state === 'rejected') {
        const changed = changedLines(h, orig, proposed);
        if (changed) {
          struck.push(new vscode.Range(changed.first, 0, changed.last, 0));
        }
      }
    });
    for (const e of editors) {
      e.setDecorations(this.hunkMark, marks);
      e.setDecorations(this.hunkRejected, struck);
    }
  }

  private proposalText(p: Pending): string {
    const doc = p.proposal && vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.proposal!.toString());
    return doc ? doc.getText() : p.details.newContent ?? '';
  }

  private async openDiff(p: Pending): Promise<void> {
    const d = p.details;
    const file = fileOf(d);
    const key = String(++this.seq);
    this.keys.set(key, d.id);
    p.original = sideUri(originalScheme, key, file);
    p.proposal = sideUri(proposalScheme, key, file);
    this.originals.set(p.original, typeof d.originalContent === 'string' ? d.originalContent : '');
    this.proposals.set(p.proposal, typeof d.newContent === 'string' ? d.newContent : '');
    this.log(`edit ${d.id}: review ${file} in the diff editor`);
    await vscode.commands.executeCommand('vscode.diff', p.original, p.proposal, diffTitle(d), { preview: false });
    this.updateContext();
    this.markHunks(p);
  }

  /**
   * Asks with a notification whose buttons are the server's choices; when they are too
   * many or too long to read there, Allow once, Reject and More…, which opens all of
   * them in a pick (dismissing the pick shows the notification again). Closing the
   * notification refuses.
   */
  private async notify(p: Pending): Promise<void> {
    const d = p.details;
    const opts = choices(d);
    const { buttons, more } = notificationButtons(opts);
    const note = alwaysNote(d);
    const q = question(d, shortDir(d.directory));
    const msg = `agentls: ${q}${note ? ' ' + note : ''}`;
    const labels = buttons.map((o) => o.label).concat(more ? [moreLabel] : []);
    for (;;) {
      const picked = await vscode.window.showWarningMessage(msg, ...labels);
      if (p.answered) {
        return;
      }
      if (more && picked === moreLabel) {
        const chosen = await this.pickChoice(p, `agentls: ${q}`);
        if (p.answered) {
          return;
        }
        if (chosen) {
          p.answer(answerFor(chosen));
          return;
        }
        continue;
      }
      const choice = buttons.find((o) => o.label === picked);
      p.answer(choice ? answerFor(choice) : refusal(d));
      return;
    }
  }

  /**
   * Puts every choice of p in a quick pick, labels exactly as the server wrote them;
   * undefined when it is dismissed, or closed because p was answered another way.
   */
  private async pickChoice(p: Pending, title: string): Promise<Choice | undefined> {
    const cts = new vscode.CancellationTokenSource();
    p.closeInput = cts;
    try {
      const items = choices(p.details).map((c) => ({ label: c.label, choice: c }));
      const picked = await vscode.window.showQuickPick(items, { title, placeHolder: 'Choose an answer' }, cts.token);
      return picked?.choice;
    } finally {
      if (p.closeInput === cts) {
        p.closeInput = undefined;
        cts.dispose();
      }
    }
  }

  /**
   * Puts ask_user's questions in the quick input, one after another, after those of an
   * earlier call. It stays open when the focus moves (to the chat, say); Escape, or
   * another quick input taking its place, dismisses all the questions.
   */
  private openQuestions(p: Pending): Promise<void> {
    const cts = new vscode.CancellationTokenSource();
    p.closeInput = cts;
    const run = async () => {
      if (p.answered) {
        return;
      }
      this.log(`questions ${p.details.id}: asked in the quick input`);
      const a = await askAll(p.details, (step) => this.putStep(step, cts.token), () => p.answered);
      this.log(`questions ${p.details.id}: ${a.outcome === 'cancel' ? 'dismissed' : `answered ${Object.keys(a.answers ?? {}).length}`}`);
      p.answer(a);
    };
    const done = this.questions.then(run);
    // The next set waits for this one, however it ends.
    this.questions = done.catch(() => undefined);
    return done;
  }

  private async putStep(step: Step, token: vscode.CancellationToken): Promise<StepResult> {
    if (step.kind === 'text') {
      return vscode.window.showInputBox(
        { title: step.title, prompt: step.prompt, placeHolder: step.placeHolder, ignoreFocusOut: true },
        token,
      );
    }
    const items: vscode.QuickPickItem[] = step.items.map((i) => ({ label: i.label, description: i.description }));
    const opts = { title: step.title, placeHolder: step.placeHolder, ignoreFocusOut: true, matchOnDescription: true };
    if (step.many) {
      const picked = await vscode.window.showQuickPick(items, { ...opts, canPickMany: true }, token);
      return picked?.map((i) => i.label);
    }
    const picked = await vscode.window.showQuickPick(items, opts, token);
    return picked?.label;
  }

  /**
   * Closes the diff of an answered edit and forgets its two sides; closes the quick
   * input of questions answered another way (the card's Dismiss, the server).
   */
  private async takeDown(p: Pending): Promise<void> {
    if (p.closeInput) {
      p.closeInput.cancel();
      p.closeInput.dispose();
      p.closeInput = undefined;
    }
    if (!p.original || !p.proposal) {
      return;
    }
    const proposal = p.proposal.toString();
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === proposal) {
          const doc = vscode.workspace.textDocuments.find((x) => x.uri.toString() === proposal);
          if (doc && doc.isDirty) {
            // Saved into the in-memory proposal only (the entry is answered): closing
            // then asks no "save changes?" question.
            await doc.save();
          }
          await vscode.window.tabGroups.close(tab, true);
        }
      }
    }
    this.originals.delete(p.original);
    this.proposals.remove(p.proposal);
    const key = idOf(p.proposal);
    if (key !== undefined) {
      // Kept until the tab's close event has been seen (it may come after the answer).
      setTimeout(() => this.keys.delete(key), 10000);
    }
  }

  /** The confirmation id of a side's URI. */
  private idOf(uri: vscode.Uri): string | undefined {
    const key = idOf(uri);
    return key !== undefined ? this.keys.get(key) : undefined;
  }

  private diffId(tab: vscode.Tab): string | undefined {
    if (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === proposalScheme) {
      return this.idOf(tab.input.modified);
    }
    return undefined;
  }

  private updateContext(): void {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const id = tab ? this.diffId(tab) : undefined;
    const reviewing = id !== undefined && this.pending.has(id);
    void vscode.commands.executeCommand('setContext', 'agentls.reviewingEdit', reviewing);
  }
}

/** The default keys of Accept This Hunk and Reject This Hunk (package.json), as shown. */
const keys = process.platform === 'darwin' ? { accept: '⌥⌘Y', reject: '⌥⌘N' } : { accept: 'Alt+Y', reject: 'Alt+N' };

/** The choice that accepts an edit as proposed (or as the user changed it): "once". */
function accept(d: ConfirmDetails): Choice {
  return onceChoice(d) ?? { id: 'once', label: 'Allow once', outcome: 'proceed_once', reject: false, byOutcome: true };
}

function fileOf(d: ConfirmDetails): string {
  if (typeof d.uri === 'string') {
    try {
      return vscode.Uri.parse(d.uri).fsPath;
    } catch {
      // fall through
    }
  }
  return typeof d.path === 'string' && d.path !== '' ? d.path : 'proposal.txt';
}

function diffTitle(d: ConfirmDetails): string {
  const name = path.basename(fileOf(d));
  const what = d.originalContent === null || d.originalContent === undefined ? 'new file' : 'current';
  return `${name} (${what} ↔ agentls proposal, editable)`;
}

function shortDir(dir: string | undefined): string | undefined {
  if (!dir) {
    return undefined;
  }
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(dir));
  if (!folder) {
    return dir;
  }
  const rel = path.relative(folder.uri.fsPath, dir);
  return rel === '' ? folder.name : path.join(folder.name, rel);
}
