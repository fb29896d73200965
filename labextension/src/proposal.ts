/**
 * A change the agent proposes to a notebook: checked against the notebook as it is, shown in
 * the cells it touches (a diff in a changed cell, a proposed cell where it will go, a cell to
 * delete marked), each place with Accept and Reject, and applied as one edit once decided.
 *
 * Everything the agent sent is put in the page as text (`textContent`), never as HTML.
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

export class Proposal {
  readonly call: string;
  private readonly panel: NotebookPanel;
  private readonly planned: Planned[];
  private readonly places: HTMLElement[] = [];
  private readonly marked: HTMLElement[] = [];
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
    this.planned.forEach((p, k) => {
      const label = parts > 1 ? ` (part ${k + 1} of ${parts} of one change)` : '';
      const box = document.createElement('div');
      box.className = `aj-proposal aj-proposal-${p.op}`;
      box.dataset.call = this.call;
      box.setAttribute('data-lm-suppress-shortcuts', 'true');
      const head = document.createElement('div');
      head.className = 'aj-proposal-head';
      box.appendChild(head);
      if (p.op === 'replace') {
        const rows = lineDiff(p.old, p.source);
        const added = rows.filter(r => r.kind === '+').length;
        const removed = rows.filter(r => r.kind === '-').length;
        head.textContent = `The agent proposes to change this cell: +${added} −${removed}${label}`;
        box.appendChild(diffBlock(rows));
      } else if (p.op === 'delete') {
        head.textContent = `The agent proposes to delete this cell${label}`;
      } else {
        const where = p.after === 'start' ? 'above' : 'below';
        head.textContent = `The agent proposes a new ${p.cellType} cell ${where}${label}`;
        box.appendChild(diffBlock(p.source.split('\n').map(text => ({ kind: '+', text }))));
      }
      box.appendChild(actions(decide));
      this.place(p, box);
    });
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
      const input = cell.inputArea?.node;
      if (input && input.parentElement === cell.node) {
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

  /** Take the change out of the page (decided, withdrawn, or the page goes). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const box of this.places) box.remove();
    for (const node of this.marked) {
      node.classList.remove('aj-proposed-delete', 'aj-proposed-change');
    }
  }

  /** Say in each place what became of a decision that is on its way. */
  settling(text: string): void {
    for (const box of this.places) {
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

function actions(decide: DecisionHandler | null): HTMLElement {
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
  accept.className = 'aj-proposal-accept jp-mod-styled jp-mod-accept';
  accept.textContent = 'Accept';
  const reject = document.createElement('button');
  reject.className = 'aj-proposal-reject jp-mod-styled jp-mod-reject';
  reject.textContent = 'Reject';
  const reason = document.createElement('input');
  reason.className = 'aj-proposal-reason';
  reason.type = 'text';
  reason.placeholder = 'Why reject? (optional, the agent reads it)';
  reason.setAttribute('aria-label', 'Why reject the change (optional)');
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
    if (event.key === 'Enter') decide(false, reason.value);
  });
  bar.append(accept, reject, reason, status);
  return bar;
}
