/**
 * atomic-jupyter's notebook extension (JupyterLab 4 and Notebook 7): each open notebook gets a
 * link with atomic-jupyter in its kernel, through which the agent reads the notebook and
 * proposes changes that a person accepts or rejects in the cells (see ./link.ts).
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';

import { followCellLinks } from './cell_links';
import { NotebookLink } from './link';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'atomic-jupyter:notebook-link',
  description: "The agent's link with the open notebook: reading it, changes shown as diffs.",
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const attach = (panel: NotebookPanel) => {
      const link = new NotebookLink(panel, app.name);
      followCellLinks(panel);
      // For tests and for a person's console: which notebooks have a link.
      (panel.node as any).ajLink = link;
      panel.node.dataset.ajLink = 'waiting';
    };
    tracker.forEach(attach);
    tracker.widgetAdded.connect((_, panel) => attach(panel));
  }
};

export default plugin;
