/**
 * One notebook's link with atomic-jupyter in its kernel: a comm of its own, opened when the
 * kernel announces itself, that answers the kernel's requests for this notebook (read it,
 * propose a change, decide or withdraw it, run cells) and tells the kernel a person's Accept
 * or Reject clicked in a cell.
 */
import { CodeCell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

import { findCell, isRunning, Proposal, ProposalError } from './proposal';
import {
  ANNOUNCE,
  type CellSummary,
  type Decision,
  type Hello,
  type Here,
  type Linked,
  type OutputSummary,
  PAGE_TARGET,
  PROTOCOL,
  type Reply,
  type Request
} from './protocol';

/** Characters of one output's text sent up (the kernel cuts further for the model). */
const OUTPUT_TEXT = 4000;
/** PNG images (base64 characters) sent up for a run's outputs. */
const PNG_LIMIT = 2_000_000;

function textOf(value: unknown): string {
  if (Array.isArray(value)) return value.join('');
  return typeof value === 'string' ? value : '';
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}

/** A cell's outputs as the kernel wants them (with images when `images`). */
export function summarizeOutputs(outputs: unknown[], images: boolean): OutputSummary[] {
  return outputs.map(raw => {
    const output = raw as Record<string, any>;
    const type = String(output.output_type ?? 'unknown');
    if (type === 'stream') {
      return { type, name: String(output.name ?? 'stdout'), text: cut(textOf(output.text), OUTPUT_TEXT) };
    }
    if (type === 'error') {
      return {
        type,
        text: `${output.ename ?? 'Error'}: ${output.evalue ?? ''}`,
        traceback: cut(textOf((output.traceback ?? []).join('\n')), OUTPUT_TEXT)
      };
    }
    const data = (output.data ?? {}) as Record<string, unknown>;
    const summary: OutputSummary = {
      type,
      text: cut(textOf(data['text/plain']) || textOf(data['text/markdown']), OUTPUT_TEXT),
      mimes: Object.keys(data)
    };
    const png = textOf(data['image/png']);
    if (images && png && png.length <= PNG_LIMIT) summary.png = png.replace(/\n/g, '');
    return summary;
  });
}

export class NotebookLink {
  private readonly panel: NotebookPanel;
  private readonly app: string;
  private comm: Kernel.IComm | null = null;
  private kernel: Kernel.IKernelConnection | null = null;
  private readonly proposals = new Map<string, Proposal>();
  private disposed = false;
  private readonly onPageHide: () => void;
  /** The callback of the kernel's announcement target (removed with the link). */
  private announced: ((comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg) => void) | null = null;

  constructor(panel: NotebookPanel, app: string) {
    this.panel = panel;
    this.app = app;
    const context = panel.sessionContext;
    context.kernelChanged.connect((_, change) => {
      this.withdrawAll();
      this.attach(change.newValue);
    }, this);
    context.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'dead' || status === 'autorestarting') {
        this.withdrawAll();
        this.comm = null;
      }
    }, this);
    context.connectionStatusChanged.connect((_, status) => {
      if (status === 'connected') this.attach(context.session?.kernel ?? null);
    }, this);
    panel.disposed.connect(() => this.dispose(), this);
    // A page that goes (reloaded, closed) says so, so the kernel stops counting on it.
    this.onPageHide = () => this.dispose();
    window.addEventListener('pagehide', this.onPageHide);
    void context.ready.then(() => this.attach(context.session?.kernel ?? null));
  }

  /** Listen for the kernel's announcement, and open the link if it made one already. */
  private attach(kernel: Kernel.IKernelConnection | null): void {
    if (this.disposed || kernel === null) return;
    if (this.kernel !== kernel) {
      this.forgetKernel();
      this.kernel = kernel;
      this.comm = null;
      const announced = () => this.open(kernel);
      this.announced = announced;
      kernel.registerCommTarget(ANNOUNCE, announced);
    }
    kernel
      .requestCommInfo({ target_name: ANNOUNCE })
      .then(reply => {
        const content = reply.content as KernelMessage.ICommInfoReply;
        if (content.status === 'ok' && Object.keys(content.comms ?? {}).length > 0) {
          this.open(kernel);
        }
      })
      .catch(() => undefined); // the kernel went: its next start announces itself again
  }

  private open(kernel: Kernel.IKernelConnection): void {
    if (this.disposed || kernel !== this.kernel || kernel.isDisposed) return;
    if (this.comm !== null && !this.comm.isDisposed) return;
    const comm = kernel.createComm(PAGE_TARGET);
    this.comm = comm;
    comm.onMsg = msg => this.handle(msg.content.data as unknown as Request | Linked, comm);
    comm.onClose = () => {
      if (this.comm === comm) {
        this.comm = null;
        this.panel.node.dataset.ajLink = 'closed';
      }
      this.withdrawAll();
    };
    const hello: Hello = {
      type: 'hello',
      protocol: PROTOCOL,
      client: kernel.clientId,
      path: this.panel.context.path,
      app: this.app
    };
    comm.open(hello as any);
    this.panel.node.dataset.ajLink = 'open';
  }

  /**
   * The kernel linked the page (its `linked`, sent once the hello was read): once the comm's
   * subshell exists, say so over it (JupyterLab >= 4.4; never, with the setting disabled). Not
   * before: the hello goes to the main shell, which a running cell may hold, and a message
   * over the subshell for a comm the kernel has not opened yet would be dropped.
   */
  private sayWhere(comm: Kernel.IComm): void {
    const over = comm as unknown as { subshellStarted?: Promise<void>; subshellId?: string | null };
    over.subshellStarted
      ?.then(() => {
        if (over.subshellId) this.send({ type: 'here' }, comm);
      })
      .catch(() => undefined);
  }

  /** Send a message (its version added) over the link's comm, or the one given. */
  private send(
    message: Omit<Reply, 'v'> | Omit<Decision, 'v'> | Omit<Here, 'v'>,
    comm: Kernel.IComm | null = this.comm
  ): void {
    if (comm && !comm.isDisposed) comm.send({ ...message, v: PROTOCOL } as any);
  }

  private handle(request: Request | Linked, comm: Kernel.IComm): void {
    if (request?.type === 'linked') {
      this.sayWhere(comm);
      return;
    }
    if (request?.type !== 'request') return;
    // A late reply goes to the comm the request came on (a restarted kernel has a new one,
    // whose request ids start again).
    const reply = (body: Omit<Reply, 'type' | 'id' | 'v'>) =>
      this.send({ type: 'reply', id: request.id, ...body } as Omit<Reply, 'v'>, comm);
    if (request.v !== PROTOCOL) {
      reply({
        ok: false,
        error: `the page speaks version ${PROTOCOL} of the notebook link, not ${JSON.stringify(request.v)}: reload it`
      });
      return;
    }
    try {
      switch (request.op) {
        case 'read':
          reply({ ok: true, ...this.read() });
          return;
        case 'propose':
          reply(this.propose(request.call, request.operations, request.expected, request.ask));
          return;
        case 'decide':
          reply(this.decide(request.call, request.accept));
          return;
        case 'withdraw':
          this.proposals.get(request.call)?.dispose();
          this.proposals.delete(request.call);
          reply({ ok: true });
          return;
        case 'run':
          void this.run(request.cell_ids).then(
            body => reply(body),
            error => reply({ ok: false, error: String(error?.message ?? error) })
          );
          return;
        default:
          reply({ ok: false, error: `the page does not know the request ${JSON.stringify((request as any).op)}` });
      }
    } catch (error: any) {
      reply({ ok: false, error: String(error?.message ?? error) });
    }
  }

  private read(): { cells: CellSummary[]; active: string | null; path: string } {
    const cells = this.panel.content.widgets.map(cell => {
      const model = cell.model as any;
      return {
        id: cell.model.id,
        type: cell.model.type,
        source: cell.model.sharedModel.getSource(),
        execution_count: cell.model.type === 'code' ? (model.executionCount ?? null) : null,
        outputs:
          cell.model.type === 'code' ? summarizeOutputs(model.outputs?.toJSON() ?? [], false) : [],
        running: isRunning(cell)
      };
    });
    return {
      cells,
      active: this.panel.content.activeCell?.model.id ?? null,
      path: this.panel.context.path
    };
  }

  private propose(
    call: string,
    operations: any,
    expected: Record<string, string>,
    ask: boolean
  ): Omit<Reply, 'type' | 'id'> {
    if (this.proposals.has(call)) {
      return { ok: false, error: 'this change was proposed already' };
    }
    let proposal: Proposal;
    try {
      proposal = new Proposal(this.panel, call, operations, expected ?? {});
    } catch (error) {
      if (error instanceof ProposalError) return { ok: false, error: error.message };
      throw error;
    }
    this.proposals.set(call, proposal);
    proposal.show(
      ask
        ? (accept, reason) => {
            proposal.settling(accept ? 'accepting…' : 'rejecting…');
            this.send({ type: 'decision', call, accept, reason });
          }
        : null
    );
    return { ok: true, changes: proposal.changes() };
  }

  private decide(call: string, accept: boolean): Omit<Reply, 'type' | 'id'> {
    const proposal = this.proposals.get(call);
    if (!proposal) {
      return { ok: false, error: 'the change is no longer shown in the notebook (was it reloaded?)' };
    }
    this.proposals.delete(call);
    try {
      if (!accept) return { ok: true, applied: [] };
      return { ok: true, applied: proposal.apply() };
    } catch (error) {
      if (error instanceof ProposalError) return { ok: false, error: error.message };
      throw error;
    } finally {
      proposal.dispose();
    }
  }

  private async run(ids: string[]): Promise<Omit<Reply, 'type' | 'id'>> {
    const cells: CodeCell[] = [];
    for (const id of ids) {
      const cell = findCell(this.panel, id);
      if (!cell) return { ok: false, error: `no cell ${JSON.stringify(id)} in the notebook` };
      if (cell.model.type !== 'code') {
        return { ok: false, error: `cell ${JSON.stringify(id)} is ${cell.model.type}, not code` };
      }
      cells.push(cell as CodeCell);
    }
    const ran: Record<string, unknown>[] = [];
    for (const cell of cells) {
      let status = 'ok';
      try {
        const reply = await CodeCell.execute(cell, this.panel.sessionContext, {
          deletedCells: this.panel.content.model?.deletedCells ?? [],
          recordTiming: false
        });
        status = reply ? String(reply.content.status) : 'not run (no kernel)';
      } catch (error: any) {
        status = `failed: ${error?.message ?? error}`;
      }
      const model = cell.model as any;
      ran.push({
        id: cell.model.id,
        execution_count: model.executionCount ?? null,
        status,
        outputs: summarizeOutputs(model.outputs?.toJSON() ?? [], true)
      });
      if (status !== 'ok') break;
    }
    return { ok: true, cells: ran };
  }

  /** Take every change shown out of the page (the kernel that asked is gone). */
  private withdrawAll(): void {
    for (const proposal of this.proposals.values()) proposal.dispose();
    this.proposals.clear();
  }

  /** Stop listening for the announcements of the kernel linked so far. */
  private forgetKernel(): void {
    const kernel = this.kernel;
    if (kernel !== null && this.announced !== null && !kernel.isDisposed) {
      kernel.removeCommTarget(ANNOUNCE, this.announced);
    }
    this.announced = null;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    window.removeEventListener('pagehide', this.onPageHide);
    this.forgetKernel();
    this.withdrawAll();
    if (this.comm && !this.comm.isDisposed) {
      try {
        this.comm.close();
      } catch {
        // the kernel is gone
      }
    }
    this.comm = null;
  }
}
