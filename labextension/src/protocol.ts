/**
 * The messages between a notebook page and atomic-jupyter in its kernel (the notebook link).
 *
 * Written down once on the kernel side too (`atomic_jupyter/notebook/link_protocol.py`; a test
 * checks that the names and the version agree). Every message carries {@link PROTOCOL}: the
 * hello as `protocol` (the kernel refuses a page of another version in words), every other
 * one as `v` (a message of another version is answered with an error, or ignored).
 *
 * - The kernel announces itself by opening a comm to the page target {@link ANNOUNCE}; a page
 *   that sees it (or, when it connects, finds such a comm open with `comm_info_request`) opens
 *   its own comm to the kernel target {@link PAGE_TARGET} with a {@link Hello}.
 * - Down (kernel to page): {@link Linked} once, then {@link Request}s, each answered by one
 *   {@link Reply} of its id.
 * - Up (page to kernel): {@link Reply}s, {@link Decision}s (a person's Accept or Reject
 *   clicked in a cell), and one {@link Here} over the page's kernel subshell, once linked.
 */

export const PROTOCOL = 2;
export const ANNOUNCE = 'atomic-jupyter-announce';
export const PAGE_TARGET = 'atomic-jupyter-page';

/** The page's first message (the comm_open's data). */
export interface Hello {
  type: 'hello';
  protocol: number;
  /** The page's kernel connection's client id: the `session` of its messages' headers. */
  client: string;
  /** The notebook's path on the server. */
  path: string;
  /** Which application: "JupyterLab", "Jupyter Notebook", ... */
  app: string;
}

/**
 * Sent once over the link's kernel subshell when the page's comms use one (JupyterLab and
 * Notebook 7 >= 4.4, "Kernel Comms over subshells" not disabled, a kernel with subshells): the
 * kernel then knows the page's replies and decisions reach it while a cell runs.
 */
/** The kernel read the page's hello and linked it (sent once, before any request). */
export interface Linked {
  type: 'linked';
  v: number;
}

export interface Here {
  type: 'here';
  v: number;
}

/** One operation of a proposed change, as the model asked for it. */
export interface Operation {
  op: 'replace' | 'insert' | 'delete';
  /** replace, delete: the cell. */
  cell_id?: string;
  /** insert: the cell it goes after; "start" for the top; absent for the end. */
  after?: string;
  /** insert: "code" or "markdown". */
  cell_type?: 'code' | 'markdown' | 'raw';
  /** replace, insert: the new source. */
  source?: string;
}

export type Request =
  | { type: 'request'; v: number; id: number; op: 'read' }
  | {
      type: 'request';
      v: number;
      id: number;
      op: 'propose';
      call: string;
      operations: Operation[];
      /** Each cell the change touches, as the agent last read it. */
      expected: Record<string, string>;
      /** Whether a person decides (false: applied at once by the kernel's next `decide`). */
      ask: boolean;
    }
  | { type: 'request'; v: number; id: number; op: 'decide'; call: string; accept: boolean; note?: string }
  | { type: 'request'; v: number; id: number; op: 'withdraw'; call: string; note?: string }
  | { type: 'request'; v: number; id: number; op: 'run'; cell_ids: string[] };

export interface Reply {
  type: 'reply';
  v: number;
  id: number;
  ok: boolean;
  error?: string;
  [key: string]: unknown;
}

export interface Decision {
  type: 'decision';
  v: number;
  call: string;
  accept: boolean;
  reason?: string;
}

/** An output of a cell, summarised for the kernel (the model reads it). */
export interface OutputSummary {
  type: string;
  /** stream: stdout or stderr. */
  name?: string;
  /** The text (stream, text/plain, error's ename: evalue), cut. */
  text: string;
  /** The mime types the output had. */
  mimes?: string[];
  /** A PNG image's base64, when asked for (a run's outputs). */
  png?: string;
  /** An error's traceback (ANSI escapes left in). */
  traceback?: string;
}

export interface CellSummary {
  id: string;
  type: string;
  source: string;
  execution_count: number | null;
  outputs: OutputSummary[];
  running: boolean;
}

/** One change as it will be (or was) applied: what the kernel shows in the card. */
export interface Change {
  op: 'replace' | 'insert' | 'delete';
  cell_id: string | null;
  /** The cell's position (0-based) before the change; for insert, where it goes. */
  index: number;
  cell_type: string;
  old: string;
  new: string;
}
