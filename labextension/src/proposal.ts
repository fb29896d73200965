/**
 * A change the agent proposes to a notebook: checked against the notebook as it is, shown in
 * the cells it touches (a diff in a changed cell, a proposed cell where it will go, a cell to
 * delete marked), each place with Accept and Reject, and applied as one edit once decided.
 *
 * Everything the agent sent is put in the page as text (`textContent`), never as HTML.
 *
 * For the keyboard and screen readers: each place is a region named after the change ("The
 * agent proposes to change cell 2: +1 −1"), its Accept and Reject are buttons in the tab
 * order (Enter and Space press them), and a polite live region says when a change is
 * proposed and what became of it (applied, rejected, no longer proposed).
 */
import type { Cell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';

import { lineDiff } from './diff';
import type { Change, Operation } from './protocol';

/** A change that cannot be shown or applied; its message is for the model and the person. */
export class ProposalError extends Error {}

/** Whether a cell's code runs now. */
export function isRunning(cell: Cell): boolean {
  const model = cell.model as unknown as { executionState?: string };
  if (model.executionState !== undefined) {
    return model.executionState === 'running';
  }
  // Older JupyterLab 4: the prompt says "[*]:" while it runs.
  return cell.node.querySelector('.jp-InputPrompt')?.textContent?.includes('*') ?? false;
}

export function findCell(panel: NotebookPanel, id: string): Cell | undefined {
  return panel.content.widgets.find(cell => cell.model.id === id);
}

interface Planned {
  op: Operation['op'];
  cellId: string | null;
  /** insert: the cell it goes after (null: the end; "start": the top). */
  after: string | null;
  cellType: string;
  old: string;
  source: string;
}

const CELL_TYPES = new Set(['code', 'markdown', 'raw']);

function describe(cellId: string | undefined | null): string {
  return cellId ? `cell ${JSON.stringify(cellId)}` : 'a cell';
}

export type DecisionHandler = (accept: boolean, reason: string) => void;

/** The id of the page's live region that announces proposals (one for every notebook). */
export const ANNOUNCER_ID = 'aj-proposal-announcer';

/** How long after it is emptied the live region gets its new text, so that a screen reader
 * hears it again even when it is the same text. */
const ANNOUNCE_DELAY_MS = 100;
let pendingAnnouncement: ReturnType<typeof setTimeout> | undefined;

/**
 * Say ``text`` to screen readers through the page's polite live region (made the first time;
 * visually hidden, see ``.aj-sr-only`` in style/index.css).
 */
export function announce(text: string): void {
  let region = document.getElementById(ANNOUNCER_ID);
  if (!region) {
    region = document.createElement('div');
    region.id = ANNOUNCER_ID;
    region.className = 'aj-sr-only';
    region.setAttribute('role', 'status');
    region.setAttribute('aria-live', 'polite');
    region.setAttribute('aria-atomic', 'true');
    document.body.appendChild(region);
  }
  const live = region;
  live.textContent = '';
  clearTimeout(pendingAnnouncement); // the newest says what is so now
  pendingAnnouncement = setTimeout(() => {
    live.textContent = text;
  }, ANNOUNCE_DELAY_MS);
}

export class Proposal {
  readonly call: string;
  private readonly panel: NotebookPanel;
  private readonly planned: Planned[];
  private readonly places: HTMLElement[] = [];
  private readonly marked: HTMLElement[] = [];
  /** What the change is, in words a person reads (the cells' positions): see `show`. */
  private summary = '';
  /** The decision clicked in a cell, once the link says it is on its way (`settling`). */
  private decision: 'accepting' | 'rejecting' | null = null;
  /** What became of the change, once it was applied or could not be. */
  private outcome: string | null = null;
  private disposed = false;

  /**
   * Check `operations` against the notebook: every cell named exists, was read as it is now
   * (`expected`), is not running, and is touched once; each operation changes something.
   *
   * @throws ProposalError with what is wrong, for the model.
   */
  constructor(
    panel: NotebookPanel,
    call: string,
    operations: Operation[],
    expected: Record<string, string>
  ) {
    this.panel = panel;
    this.call = call;
    if (!Array.isArray(operations) || operations.length === 0) {
      throw new ProposalError('the change has no operations');
    }
    const touched = new Set<string>();
    this.planned = operations.map((operation, index) =>
      this.plan(operation, index, expected, touched)
    );
  }

  private plan(
    operation: Operation,
    index: number,
    expected: Record<string, string>,
    touched: Set<string>
  ): Planned {
    const where = `operation ${index + 1}`;
    if (operation.op === 'insert') {
      const cellType = operation.cell_type ?? 'code';
      if (!CELL_TYPES.has(cellType)) {
        throw new ProposalError(`${where}: a cell is code, markdown or raw, not ${cellType}`);
      }
      const after = operation.after ?? null;
      if (after !== null && after !== 'start' && !findCell(this.panel, after)) {
        throw new ProposalError(
          `${where}: no ${describe(after)} in the notebook to insert after (read the notebook again)`
        );
      }
      return { op: 'insert', cellId: null, after, cellType, old: '', source: operation.source ?? '' };
    }
    const id = operation.cell_id ?? '';
    const cell = id ? findCell(this.panel, id) : undefined;
    if (!cell) {
      throw new ProposalError(
        `${where}: no ${describe(id)} in the notebook (read the notebook again for its cells' ids)`
      );
    }
    if (touched.has(id)) {
      throw new ProposalError(`${where}: ${describe(id)} is changed twice in one change`);
    }
    touched.add(id);
    const now = cell.model.sharedModel.getSource();
    if (!(id in expected)) {
      throw new ProposalError(`${where}: read ${describe(id)} before changing it`);
    }
    if (expected[id] !== now) {
      throw new ProposalError(
        `${where}: ${describe(id)} changed since you read it (the person edited it): read it again`
      );
    }
    if (isRunning(cell)) {
      throw new ProposalError(`${where}: ${describe(id)} is running; wait until it is done`);
    }
    if (operation.op === 'replace') {
      const source = operation.source ?? '';
      if (source === now) {
        throw new ProposalError(`${where}: the new source of ${describe(id)} is its source now`);
      }
      return { op: 'replace', cellId: id, after: null, cellType: cell.model.type, old: now, source };
    }
    if (operation.op === 'delete') {
      return { op: 'delete', cellId: id, after: null, cellType: cell.model.type, old: now, source: '' };
    }
    throw new ProposalError(`${where}: an operation is replace, insert or delete`);
  }

  /** The changes, as the card shows them. */
  changes(): Change[] {
    const cells = this.panel.content.widgets;
    return this.planned.map(p => {
      let index: number;
      if (p.op === 'insert') {
        index =
          p.after === 'start'
            ? 0
            : p.after === null
              ? cells.length
              : cells.findIndex(c => c.model.id === p.after) + 1;
      } else {
        index = cells.findIndex(c => c.model.id === p.cellId);
      }
      return { op: p.op, cell_id: p.cellId, index, cell_type: p.cellType, old: p.old, new: p.source };
    });
  }

  /** Show the change in the cells, each place with Accept and Reject (`decide` gets a click). */
  show(decide: DecisionHandler | null): void {
    const parts = this.planned.length;
    const names: string[] = [];
    this.planned.forEach((p, k) => {
      const label = parts > 1 ? ` (part ${k + 1} of ${parts} of one change)` : '';
      const box = document.createElement('div');
      box.className = `aj-proposal aj-proposal-${p.op}`;
      box.dataset.call = this.call;
      box.setAttribute('data-lm-suppress-shortcuts', 'true');
      box.setAttribute('role', 'region');
      const head = document.createElement('div');
      head.className = 'aj-proposal-head';
      box.appendChild(head);
      let name: string;
      if (p.op === 'replace') {
        const rows = lineDiff(p.old, p.source);
        const added = rows.filter(r => r.kind === '+').length;
        const removed = rows.filter(r => r.kind === '-').length;
        head.textContent = `The agent proposes to change this cell: +${added} −${removed}${label}`;
        name = `change ${this.position(p.cellId)}: +${added} −${removed}`;
        box.appendChild(diffBlock(rows));
      } else if (p.op === 'delete') {
        head.textContent = `The agent proposes to delete this cell${label}`;
        name = `delete ${this.position(p.cellId)}`;
      } else {
        const where = p.after === 'start' ? 'above' : 'below';
        head.textContent = `The agent proposes a new ${p.cellType} cell ${where}${label}`;
        name = `add a new ${p.cellType} cell ${this.insertedAt(p)}`;
        box.appendChild(diffBlock(p.source.split('\n').map(text => ({ kind: '+', text }))));
      }
      names.push(name);
      box.setAttribute('aria-label', `The agent proposes to ${name}${label}`);
      const whole = parts > 1 ? `the whole change (${parts} parts)` : `the change`;
      box.appendChild(actions(decide, whole, () => this.backToNotebook(box)));
      this.place(p, box);
    });
    this.summary =
      parts > 1 ? `${names.slice(0, -1).join(', ')} and ${names[parts - 1]}` : names[0];
    if (decide !== null) {
      announce(
        `The agent proposes to ${this.summary} in ${this.notebookName()}. ` +
          `Accept or Reject it in the notebook (Tab from the cell).`
      );
    }
  }

  /** A cell as a person finds it: "cell 3" (its position, counted from 1). */
  private position(cellId: string | null): string {
    const at = this.panel.content.widgets.findIndex(c => c.model.id === cellId);
    return at >= 0 ? `cell ${at + 1}` : describe(cellId);
  }

  /** Where an inserted cell goes, in positions: "below cell 2", "at the top", "at the end". */
  private insertedAt(p: Planned): string {
    if (p.after === 'start') return 'at the top';
    if (p.after === null) return 'at the end';
    return `below ${this.position(p.after)}`;
  }

  /**
   * Give the keyboard back to the notebook, in command mode: to the cell that holds `near` (a
   * place of this change), else to the first cell of the change still there, else to the
   * notebook's active cell.
   */
  private backToNotebook(near?: Node | null): void {
    const notebook = this.panel.content as unknown as {
      widgets: readonly Cell[];
      node: HTMLElement;
      activeCell?: Cell | null;
      activeCellIndex?: number;
      mode?: string;
    };
    const cells = notebook.widgets;
    let index = near ? cells.findIndex(cell => cell.node.contains(near)) : -1;
    if (index < 0) {
      index = cells.findIndex(cell =>
        this.planned.some(p => p.cellId === cell.model.id || p.after === cell.model.id)
      );
    }
    if (index >= 0 && notebook.activeCellIndex !== undefined) notebook.activeCellIndex = index;
    if (notebook.mode !== undefined) notebook.mode = 'command';
    (notebook.activeCell?.node ?? cells[index]?.node ?? notebook.node).focus();
  }

  private notebookName(): string {
    const path = (this.panel as { context?: { path?: string } }).context?.path ?? '';
    return path ? path.split('/').pop()! : 'the notebook';
  }

  private place(p: Planned, box: HTMLElement): void {
    const cells = this.panel.content.widgets;
    if (p.op === 'insert') {
      const anchor =
        p.after === 'start'
          ? cells[0]
          : p.after === null
            ? cells[cells.length - 1]
            : findCell(this.panel, p.after);
      box.classList.add('aj-proposal-new-cell');
      if (!anchor) {
        this.panel.content.node.prepend(box);
      } else if (p.after === 'start') {
        anchor.node.prepend(box);
      } else {
        anchor.node.appendChild(box);
      }
    } else {
      const cell = findCell(this.panel, p.cellId ?? '');
      if (!cell) return;
      if (p.op === 'delete') {
        cell.node.classList.add('aj-proposed-delete');
        this.marked.push(cell.node);
      } else {
        cell.node.classList.add('aj-proposed-change');
        this.marked.push(cell.node);
      }
      // Right under the cell's source, before its outputs: after the child of the cell that
      // holds its input area (JupyterLab 4 wraps it with its collapser).
      let input: HTMLElement | null = cell.inputArea?.node ?? null;
      while (input && input.parentElement !== cell.node) input = input.parentElement;
      if (input) {
        input.after(box);
      } else {
        cell.node.appendChild(box);
      }
    }
    this.places.push(box);
  }

  /**
   * Apply the change as one edit of the notebook (one undo step): every cell is checked again
   * first, so nothing is half-applied.
   *
   * @returns each operation's cell id and position after the change.
   * @throws ProposalError when a cell changed, went or runs since the change was proposed.
   */
  apply(): { op: string; cell_id: string; index: number }[] {
    try {
      const applied = this.applyNow();
      this.outcome = `Applied the agent's change: ${this.summary}.`;
      return applied;
    } catch (error) {
      if (error instanceof ProposalError) {
        this.outcome = `The agent's change was not applied: ${error.message}.`;
      }
      throw error;
    }
  }

  private applyNow(): { op: string; cell_id: string; index: number }[] {
    for (const p of this.planned) {
      if (p.op === 'insert') {
        if (p.after !== null && p.after !== 'start' && !findCell(this.panel, p.after)) {
          throw new ProposalError(`${describe(p.after)} was deleted while the change waited`);
        }
        continue;
      }
      const cell = findCell(this.panel, p.cellId ?? '');
      if (!cell) {
        throw new ProposalError(`${describe(p.cellId)} was deleted while the change waited`);
      }
      if (cell.model.sharedModel.getSource() !== p.old) {
        throw new ProposalError(
          `${describe(p.cellId)} was edited while the change waited: read it again`
        );
      }
      if (isRunning(cell)) {
        throw new ProposalError(`${describe(p.cellId)} is running; nothing was changed`);
      }
    }
    const notebook = this.panel.content.model;
    if (!notebook) throw new ProposalError('the notebook is closed');
    const shared = notebook.sharedModel;
    const applied: { op: string; cell_id: string; index: number }[] = [];
    const inserted: string[] = [];
    const setSources = () => {
      for (const p of this.planned) {
        if (p.op === 'replace') {
          findCell(this.panel, p.cellId!)!.model.sharedModel.setSource(p.source);
        }
      }
    };
    // Each cell keeps its own undo history unless the notebook's is document-wide: a changed
    // source is then one undo step in its cell (Ctrl+Z in the cell brings it back), and the
    // cells inserted and deleted one step of the notebook's; document-wide, all is one step.
    const documentWide = !(shared as any).disableDocumentWideUndoRedo;
    if (!documentWide) setSources();
    shared.transact(() => {
      if (documentWide) setSources();
      // Each insert's place, found before any cell goes: after a cell the change deletes, a
      // new cell goes after the nearest earlier cell that stays (or at the top).
      const deleted = new Set(this.planned.filter(p => p.op === 'delete').map(p => p.cellId!));
      const ids = shared.cells.map(c => c.id);
      const anchors = this.planned.map(p => {
        if (p.op !== 'insert' || p.after === null || p.after === 'start') return p.after;
        let at = ids.indexOf(p.after);
        while (at >= 0 && deleted.has(ids[at])) at--;
        return at >= 0 ? ids[at] : 'start';
      });
      for (const p of this.planned) {
        if (p.op === 'delete') {
          shared.deleteCell(shared.cells.findIndex(c => c.id === p.cellId));
        }
      }
      // Several inserts at one place keep their order: each goes after the one before it.
      const lastAt = new Map<string, string>();
      this.planned.forEach((p, k) => {
        if (p.op !== 'insert') return;
        const anchor = anchors[k];
        const key = anchor ?? '\u0000end';
        const after = lastAt.get(key) ?? anchor;
        let index: number;
        if (after === null) {
          index = shared.cells.length;
        } else if (after === 'start') {
          index = 0;
        } else {
          index = shared.cells.findIndex(c => c.id === after) + 1;
        }
        const cell = shared.insertCell(index, {
          cell_type: p.cellType as 'code',
          source: p.source,
          metadata: {}
        });
        inserted.push(cell.id);
        if (anchor !== null) lastAt.set(key, cell.id);
      });
    });
    // Positions once everything is applied (-1: the cell was deleted).
    for (const id of inserted) {
      applied.push({ op: 'insert', cell_id: id, index: shared.cells.findIndex(c => c.id === id) });
    }
    for (const p of this.planned) {
      if (p.op === 'insert') continue;
      const index = shared.cells.findIndex(c => c.id === p.cellId);
      applied.push({ op: p.op, cell_id: p.cellId!, index });
    }
    // A new markdown cell is shown rendered, as a person's would be after Shift+Enter.
    for (const cell of this.panel.content.widgets) {
      if (applied.some(a => a.op === 'insert' && a.cell_id === cell.model.id)) {
        const markdown = cell as unknown as { rendered?: boolean };
        if (cell.model.type === 'markdown' && markdown.rendered === false) {
          markdown.rendered = true;
        }
      }
    }
    return applied;
  }

  /**
   * Take the change out of the page (decided, withdrawn, or the page goes) and say what became
   * of it; the keyboard's place, if it was in the change, goes back to the notebook.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const focused = this.places.find(box => box.contains(document.activeElement));
    for (const box of this.places) box.remove();
    if (focused) this.backToNotebook();
    if (this.summary) {
      announce(
        this.outcome ??
          (this.decision === 'rejecting'
            ? `Rejected the agent's change: ${this.summary}. Nothing was changed.`
            : `The agent's change is no longer proposed, and was not applied: ${this.summary}.`)
      );
    }
    for (const node of this.marked) {
      node.classList.remove('aj-proposed-delete', 'aj-proposed-change');
    }
  }

  /** Say in each place what became of a decision that is on its way. */
  settling(text: string): void {
    this.decision = text.startsWith('accept') ? 'accepting' : 'rejecting';
    for (const box of this.places) {
      // A disabled button loses the keyboard: the place keeps it until the change goes (it
      // can be given the keyboard, not tabbed to).
      if (box.contains(document.activeElement)) {
        box.tabIndex = -1;
        box.focus();
      }
      for (const button of Array.from(box.querySelectorAll('button'))) {
        (button as HTMLButtonElement).disabled = true;
      }
      const status = box.querySelector('.aj-proposal-status');
      if (status) status.textContent = text;
    }
  }
}

function diffBlock(rows: { kind: string; text: string }[]): HTMLElement {
  const block = document.createElement('div');
  block.className = 'aj-proposal-diff';
  for (const row of rows) {
    const line = document.createElement('div');
    line.className =
      row.kind === '+' ? 'aj-diff-added' : row.kind === '-' ? 'aj-diff-removed' : 'aj-diff-kept';
    line.textContent = `${row.kind} ${row.text}`;
    block.appendChild(line);
  }
  return block;
}

/**
 * The bar of a place: Accept, Reject and the reason box (or, for a change a rule applies,
 * "applying…"). ``whole`` names what a button decides ("the change"); ``leave`` gives the
 * keyboard back to the notebook.
 *
 * Keys: Tab reaches the buttons and the box; Enter or Space presses a button; Enter in the box
 * rejects with its reason; Escape in the box goes to Reject (what was typed is kept), and
 * Escape on a button goes back to the notebook. The change stays until it is decided.
 */
function actions(decide: DecisionHandler | null, whole: string, leave: () => void): HTMLElement {
  const bar = document.createElement('div');
  bar.className = 'aj-proposal-actions';
  const status = document.createElement('span');
  status.className = 'aj-proposal-status';
  if (decide === null) {
    status.textContent = 'applying…';
    bar.appendChild(status);
    return bar;
  }
  const accept = document.createElement('button');
  accept.type = 'button';
  accept.className = 'aj-proposal-accept jp-mod-styled jp-mod-accept';
  accept.textContent = 'Accept';
  accept.setAttribute('aria-label', `Accept ${whole}`);
  const reject = document.createElement('button');
  reject.type = 'button';
  reject.className = 'aj-proposal-reject jp-mod-styled jp-mod-reject';
  reject.textContent = 'Reject';
  reject.setAttribute('aria-label', `Reject ${whole}`);
  const reason = document.createElement('input');
  reason.className = 'aj-proposal-reason';
  reason.type = 'text';
  reason.placeholder = 'Why reject? (optional, the agent reads it)';
  reason.setAttribute('aria-label', `Why reject ${whole} (optional, the agent reads it)`);
  accept.addEventListener('click', event => {
    event.stopPropagation();
    decide(true, '');
  });
  reject.addEventListener('click', event => {
    event.stopPropagation();
    decide(false, reason.value);
  });
  reason.addEventListener('keydown', event => {
    event.stopPropagation(); // a key typed here is not a notebook shortcut
    if (event.key === 'Enter') {
      event.preventDefault();
      decide(false, reason.value);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      reject.focus();
    }
  });
  for (const button of [accept, reject]) {
    button.addEventListener('keydown', event => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        leave();
      } else if (event.key === 'Enter' || event.key === ' ') {
        // The button's own key (it clicks): never a notebook shortcut.
        event.stopPropagation();
      }
    });
  }
  bar.append(accept, reject, reason, status);
  return bar;
}
