/**
 * Links to cells in our outputs: a tool card names a cell ("cell 3") as an element with
 * `data-aj-cell="<the cell's id>"` (atomic_jupyter/ui/tool_cards/markup.py, `cell_link`).
 * A click on it, or Enter or Space while it has the focus, makes that cell the notebook's
 * active cell and scrolls it into view. A cell no longer in the notebook is said in the
 * link's tooltip; nothing moves.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

/** The tooltip of a link whose cell is gone. */
export const GONE = 'This cell is no longer in the notebook';

/** Follow the cell links drawn inside `panel` (its outputs) from now on. */
export function followCellLinks(panel: NotebookPanel): void {
  const follow = (event: Event): void => {
    const start = event.target instanceof Element ? event.target : null;
    const link = start?.closest<HTMLElement>('[data-aj-cell]');
    if (!link || !panel.node.contains(link)) return;
    if (event instanceof KeyboardEvent && event.key !== 'Enter' && event.key !== ' ') return;
    // Ours alone: no notebook shortcut (Enter edits a cell) and no page scroll (Space).
    event.preventDefault();
    event.stopPropagation();
    const notebook = panel.content;
    const index = notebook.widgets.findIndex(cell => cell.model.id === link.dataset.ajCell);
    if (index < 0) {
      link.title = GONE;
      return;
    }
    notebook.mode = 'command';
    notebook.activeCellIndex = index;
    void notebook.scrollToCell(notebook.widgets[index], 'center');
  };
  panel.node.addEventListener('click', follow);
  // Captured: the notebook's own keydown handling must not see an Enter meant for a link.
  panel.node.addEventListener('keydown', follow, true);
}
